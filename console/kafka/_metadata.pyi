# The types of console/kafka/_metadata.c (the compiled Metadata decoder).
Broker = tuple[int, str, int, str | None]  # node_id, host, port, rack
# name, error_code, is_internal, packed (marshal.dumps([(partition_id, leader_id, [replicas], [isr])], 2)),
# partitions, replication_factor, under_replicated, offline
Topic = tuple[str | None, int, bool, bytes, int, int, int, int]
# broker_id, replicas, leaders, under_replicated, out_of_isr, offline (over the named topics' partitions)
Counts = tuple[int, int, int, int, int, int]

def decode_metadata(
    data: bytes | bytearray | memoryview, version: int, /
) -> tuple[int, str | None, int, list[Broker], list[Topic], int, list[Counts]]: ...
