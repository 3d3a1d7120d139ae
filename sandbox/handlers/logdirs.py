"""AlterReplicaLogDirs (API 34, KIP-113): move replicas between the log dirs of the broker asked.

The rules, per replica, are ``sandbox/logdirs.py``'s (Kafka 4.1's ReplicaManager.alterReplicaLogDirs);
the answer lists every replica asked, grouped by topic, each with its error code.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

from sandbox import logdirs
from sandbox.apis import RequestContext, api


@api(AlterReplicaLogDirsRequest, 1, 2)
def alter_replica_log_dirs(ctx: RequestContext, req: Any) -> Any:
    """Create (or drop) future replicas in the dirs named; an error code per replica."""
    st, node = ctx.state, ctx.node
    rt = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
    pr = rt.AlterReplicaLogDirPartitionResult
    by_topic: dict[str, list[Any]] = {}
    for d in req.dirs:
        for t in d.topics:
            for index in t.partitions:
                code = logdirs.alter(st, node, d.path, t.name, index)
                by_topic.setdefault(t.name, []).append(pr(partition_index=index, error_code=code))
    return AlterReplicaLogDirsResponse(
        version=ctx.version,
        throttle_time_ms=0,
        results=[rt(topic_name=name, partitions=parts) for name, parts in by_topic.items()],
    )
