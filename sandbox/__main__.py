"""Command line: run a sandbox cluster, or send it control commands.

python -m sandbox --brokers 3 --controllers 3 --port 19092 --speed 10 --demo [--state FILE]
python -m sandbox ctl [--control 127.0.0.1:19292] stop-broker 2
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading

from sandbox.cluster import DEFAULT_PORT, SandboxCluster

CONTROL_PORT_OFFSET = 200  # control socket on port+200 (19292 by default)


def _run(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m sandbox", description="Run a Kafka sandbox cluster.")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--controllers", type=int, default=3)
    ap.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help="first broker port (brokers port+i, controllers port+100+i); 0 = ephemeral",
    )
    ap.add_argument("--speed", type=float, default=10.0, help="virtual seconds per real second")
    ap.add_argument(
        "--racks", default="", help="comma-separated rack names, cycled over brokers (demo: r1,r2,r3)"
    )
    ap.add_argument("--seed", default="sandbox", help="data seed (cluster id and topic ids)")
    ap.add_argument("--demo", action="store_true", help="load demo topics, configs, ACLs, groups, data")
    ap.add_argument("--state", default=None, help="state file: restored at start, written at exit")
    ap.add_argument(
        "--control-port",
        type=int,
        default=None,
        help="control socket port (default port+200, ephemeral when --port 0)",
    )
    ap.add_argument("--log-level", default="WARNING")
    a = ap.parse_args(argv)
    import logging

    logging.basicConfig(level=a.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    racks = [r for r in a.racks.split(",") if r] or (["r1", "r2", "r3"] if a.demo else None)
    cluster = SandboxCluster(
        brokers=a.brokers,
        controllers=a.controllers,
        port=a.port,
        speed=a.speed,
        racks=racks,
        seed=a.seed,
        state_file=a.state,
    )
    cluster.start()
    restored = bool(a.state and cluster.state.topics)
    if a.demo and not restored:
        from sandbox.demo import load_demo

        load_demo(cluster)
    from sandbox.control import ControlServer

    cport = a.control_port if a.control_port is not None else (a.port + CONTROL_PORT_OFFSET if a.port else 0)
    control = ControlServer(cluster, cport).start()
    print(f"CLUSTER_ID={cluster.cluster_id}")
    print(f"BOOTSTRAP_SERVERS={cluster.bootstrap_servers}")
    print(f"BOOTSTRAP_CONTROLLERS={cluster.bootstrap_controllers}")
    print(f"CONTROL={control.address}", flush=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    control.stop()
    cluster.shutdown()
    print("sandbox stopped", flush=True)
    return 0


def _ctl(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m sandbox ctl", description="Control a running sandbox.")
    ap.add_argument(
        "--control",
        default=os.environ.get("SANDBOX_CONTROL", f"127.0.0.1:{DEFAULT_PORT + CONTROL_PORT_OFFSET}"),
    )
    ap.add_argument("--node", type=int, default=None, help="fault: only this node")
    ap.add_argument("--delay", type=float, default=0.0, help="fault: delay in seconds")
    ap.add_argument("--error", type=int, default=None, help="fault: Kafka error code to answer")
    ap.add_argument("--count", type=int, default=None, help="fault: number of requests affected")
    ap.add_argument(
        "command",
        help="status | stop-broker ID | start-broker ID | stop-controller ID | "
        "start-controller ID | fault API | clear-faults | config-lag SECONDS | advance SECONDS | "
        "synthetic TOPIC BYTES_PER_S | speed FACTOR | save [FILE]",
    )
    ap.add_argument("args", nargs="*")
    a = ap.parse_args(argv)
    from sandbox.control import send

    opts = {"node": a.node, "delay_s": a.delay, "error_code": a.error, "count": a.count}
    try:
        out = send(a.control, a.command, a.args, opts)
    except OSError as exc:
        print(f"cannot reach the sandbox control socket at {a.control}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out, indent=2))
    return 0 if out.get("ok") else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m sandbox``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ctl"]:
        return _ctl(argv[1:])
    return _run(argv)


if __name__ == "__main__":
    sys.exit(main())
