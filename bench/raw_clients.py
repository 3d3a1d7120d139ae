"""The floors' clients: raw requests with no console code, the fastest client for the calls in question.

* ``KpRaw``: raw requests through kafka-python's own ``KafkaAdminClient`` connection manager
  (kafka-python's protocol classes, no console code): ``send``, ``send_many`` (all in flight, wait
  for all) or ``start`` (in flight now, answers taken one by one as they arrive, more requests can
  be added meanwhile);
* ``confluent_admin``: a warmed confluent-kafka ``AdminClient``;
* ``raw_list_offsets``: the floors' own ListOffsets request (never the console's builder).

The floor of a Kafka bench is the faster of the two clients for the calls in question, measured in
the same run (``harness.compare``).
"""

from __future__ import annotations

import threading


def raw_list_offsets(partitions, timestamp: int):
    """One raw ListOffsets (v1+, a consumer at read-uncommitted) of ``{topic: [partition]}`` at
    ``timestamp`` (-1 latest, -2 earliest), from kafka-python's protocol classes: the floors' own
    request (never the console's builder)."""
    from kafka.protocol.consumer.offsets import ListOffsetsRequest

    T = ListOffsetsRequest.ListOffsetsTopic
    P = T.ListOffsetsPartition
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=[
            T(name=t, partitions=[P(partition_index=p, timestamp=timestamp) for p in ps])
            for t, ps in partitions.items()
        ],
        timeout_ms=60_000,
        min_version=1,
    )


def confluent_admin(bootstrap: str):
    """A confluent-kafka AdminClient with its connections up (as a long-lived client's)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.list_topics(timeout=60)
    return admin


class KpRaw:
    """Protocol requests through kafka-python's own ``KafkaAdminClient`` connection manager.

    Responses are kafka-python's decoded response objects and nothing more. ``send_many`` puts
    every request in flight at once on kafka-python's I/O thread and waits for all.
    """

    def __init__(self, bootstrap: str) -> None:
        from kafka.admin import KafkaAdminClient

        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=120_000)
        self.manager = self.admin._manager

    def send(self, request, node=None):
        return self.manager.run(self.manager.send, request, node)

    def send_many(self, requests):
        futures = [self.manager.call_soon(self.manager.send, r, n) for r, n in requests]
        done = threading.Event()
        left = [len(futures)]
        lock = threading.Lock()

        def one(_):
            with lock:
                left[0] -= 1
                if not left[0]:
                    done.set()

        for f in futures:
            f.add_both(one)
        if futures and not done.wait(300):
            raise TimeoutError("raw requests did not all answer within 300 s")
        for f in futures:
            if f.exception is not None:
                raise f.exception
        return [f.value for f in futures]

    def start(self, requests) -> RawAnswers:
        """Put ``[(request, node)]`` in flight now; iterate the result for the answers as they arrive."""
        answers = RawAnswers(self.manager)
        answers.add(requests)
        return answers

    def brokers(self) -> list[int]:
        return sorted(b.node_id for b in self.manager.cluster.brokers())

    def close(self) -> None:
        self.admin.close()


class RawAnswers:
    """Requests in flight on kafka-python's I/O thread; iterating yields ``(index, answer)`` in the
    order the answers arrive (index: the request's position over every ``add``), so a caller can
    reduce and drop each one before the next, and raises the first failure. Nothing here keeps an
    answer once it is handed over."""

    def __init__(self, manager) -> None:
        import queue

        self._manager = manager
        self._arrived = queue.SimpleQueue()
        self._sent = 0

    def add(self, requests) -> None:
        for request, node in requests:
            future = self._manager.call_soon(self._manager.send, request, node)
            future.add_both(_Into(self._arrived, self._sent))
            self._sent += 1

    def __iter__(self):
        for _ in range(self._sent):
            index, value = self._arrived.get(timeout=300)
            if isinstance(value, BaseException):
                raise value
            yield index, value
            del value


class _Into:
    """A future's callback: ``(index, value or exception)`` into a queue."""

    __slots__ = ("queue", "index")

    def __init__(self, queue, index: int) -> None:
        self.queue, self.index = queue, index

    def __call__(self, value) -> None:
        self.queue.put((self.index, value))
