"""The floors' clients: raw requests with no console code, the fastest client for the calls in question.

* ``KpRaw``: raw requests through kafka-python's own ``KafkaAdminClient`` connection manager
  (kafka-python's protocol classes, no console code): ``send``, ``send_many`` (all in flight, wait
  for all) or ``start`` (in flight now, answers taken one by one as they arrive, more requests can
  be added meanwhile);
* ``confluent_admin``: a warmed confluent-kafka ``AdminClient``;
* ``raw_list_offsets``: the floors' own ListOffsets request (never the console's builder);
* ``Wire``: requests written to plain sockets and their answers read whole into buffers, nothing
  decoded: the bytes a console must receive, the floor no client can go under (for reads whose
  answers are large and which the console decodes in C, where the clients' own decoding would be a
  floor the console beats).

The floor of a Kafka bench is the fastest of these for the calls in question, measured in the same
run (``harness.compare``).
"""

from __future__ import annotations

import selectors
import socket
import struct
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


class Wire:
    """Plain sockets to a sandbox's brokers (``host:port`` list), kept open across runs.

    ``exchange([(broker index, request, version)])`` encodes each request (kafka-python's protocol
    classes, a header with its own correlation id), writes them all, then reads every answer whole
    into a buffer kept per socket (a selector over the sockets, so the brokers answer in parallel);
    returns the answers' sizes. Nothing is decoded; requests to one broker go on separate sockets
    (a broker answers one connection's requests in order)."""

    def __init__(self, bootstrap: str, sockets_per_broker: int = 3) -> None:
        self.addresses = [a.rsplit(":", 1) for a in bootstrap.split(",")]
        self._pool: dict[tuple[int, int], socket.socket] = {}
        self._buffers: dict[tuple[int, int], bytearray] = {}
        self._per_broker = sockets_per_broker

    def _socket(self, key: tuple[int, int]) -> socket.socket:
        sock = self._pool.get(key)
        if sock is None:
            host, port = self.addresses[key[0] % len(self.addresses)]
            sock = socket.create_connection((host, int(port)))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pool[key] = sock
        return sock

    def exchange(self, requests) -> list[int]:
        used: dict[int, int] = {}
        keys = []
        for broker, request, version in requests:
            key = (broker, used.get(broker, 0))
            used[broker] = key[1] + 1
            if key[1] >= self._per_broker:
                raise ValueError("more requests to one broker than sockets_per_broker")
            request.with_header(correlation_id=1, client_id="bench-wire")
            self._socket(key).sendall(request.encode(version=version, header=True, framed=True))
            keys.append(key)
        state = {k: [bytearray(4), 0, None] for k in keys}  # head, received, size
        waiting = {self._pool[k]: k for k in keys}
        sizes = {}
        # a selector (epoll), not select(): a fleet's sockets pass select()'s 1024 descriptors
        poller = selectors.DefaultSelector()
        for sock in waiting:
            poller.register(sock, selectors.EVENT_READ)
        while waiting:
            ready = [key.fileobj for key, _ in poller.select(300)]
            if not ready:
                raise TimeoutError("no answer within 300 s")
            for sock in ready:
                key = waiting[sock]
                head, got, size = state[key]
                if size is None:
                    n = sock.recv_into(memoryview(head)[got:])
                    if not n:
                        raise EOFError("the broker closed the connection")
                    got += n
                    if got == 4:
                        size = struct.unpack(">i", head)[0]
                        if len(self._buffers.get(key, b"")) < size:
                            self._buffers[key] = bytearray(size)
                        got = 0
                else:
                    n = sock.recv_into(memoryview(self._buffers[key])[got:size])
                    if not n:
                        raise EOFError("the broker closed the connection")
                    got += n
                state[key] = [head, got, size]
                if size is not None and got == size:
                    sizes[key] = size
                    del waiting[sock]
                    poller.unregister(sock)
        poller.close()
        return [sizes[k] for k in keys]

    def close(self) -> None:
        for sock in self._pool.values():
            sock.close()
