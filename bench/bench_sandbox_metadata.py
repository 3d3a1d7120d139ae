"""Full Metadata request (all topics) against a 50-broker, 100,000-partition sandbox; goal: under 1 s.

The sandbox runs in a child process (as it does for real clients). The figure is the time from
sending a full Metadata request (v12, topics=null) until the whole response has arrived, for the
first request after the topics were created (no encoded response cached yet; topic entries were
pre-encoded as the topics were created). For reference it also prints a repeat request (encoded
response cached), the first request after a broker stop (every topic with a replica on it is
rebuilt and re-encoded) and kafka-python's decoding time.
Prints ``RESULT sandbox_metadata ratio=<seconds/1> goal<=1.0`` last.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.harness import gate  # noqa: E402

TARGET_S = 1.0


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def full_metadata(hostport: str, version: int = 12) -> tuple[float, float, int]:
    """(answer seconds, decode seconds, topic count) for one full Metadata round trip."""
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    host, port = hostport.split(":")
    with socket.create_connection((host, int(port))) as sock:
        req = MetadataRequest(topics=None, allow_auto_topic_creation=False)
        req.with_header(correlation_id=1, client_id="bench")
        frame = req.encode(version=version, header=True, framed=True)
        start = time.perf_counter()
        sock.sendall(frame)
        size = struct.unpack(">i", _recv(sock, 4))[0]
        data = _recv(sock, size)
        answered = time.perf_counter() - start
    start = time.perf_counter()
    resp = MetadataResponse.decode(data, version=version, header=True)
    return answered, time.perf_counter() - start, len(resp.topics)


def serve() -> None:
    """Child: build the big cluster, print its first broker, wait for stdin to close."""
    sys.path.insert(0, HERE)
    from bench_sandbox_start import build

    cluster, seconds = build()
    print(cluster.bootstrap_servers.split(",")[0], f"{seconds:.2f}", flush=True)
    for line in sys.stdin:
        if line.strip() == "stop-broker":
            cluster.stop_broker(50)  # invalidates the cached entries of every topic it hosts
            print("stopped", flush=True)
    cluster.shutdown()


def main() -> None:
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(HERE),
    )
    try:
        first, built = child.stdout.readline().split()
        cold, decode, topics = full_metadata(first)
        warm, _, _ = full_metadata(first)
        child.stdin.write("stop-broker\n")
        child.stdin.flush()
        child.stdout.readline()
        changed, _, _ = full_metadata(first)
        print(
            f"cluster built in {built}s; topics={topics} first_answer_s={cold:.3f} cached_answer_s={warm:.3f} "
            f"after_broker_stop_answer_s={changed:.3f} client_decode_s={decode:.3f}"
        )
    finally:
        child.stdin.close()
        child.wait(60)
    gate("sandbox_metadata", cold / TARGET_S, 1.0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main()
