"""A tiny line-oriented JSON control server so faults can be injected from the command line.

Protocol: one JSON object per line, ``{"cmd": "stop-broker", "args": [2]}``; the answer is one
JSON line ``{"ok": true, ...}`` or ``{"ok": false, "error": "..."}``. Bound to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.cluster import SandboxCluster

COMMANDS = (
    "status",
    "stop-broker",
    "start-broker",
    "stop-controller",
    "start-controller",
    "freeze-broker",
    "thaw-broker",
    "fault",
    "clear-faults",
    "config-lag",
    "advance",
    "synthetic",
    "speed",
    "save",
    "hang-txn",
)


def run_command(cluster: SandboxCluster, cmd: str, args: list[Any], opts: dict[str, Any]) -> dict[str, Any]:
    """Execute one control command against the cluster."""
    if cmd == "status":
        st = cluster.state
        with st.lock:
            return {
                "cluster_id": cluster.cluster_id,
                "bootstrap_servers": cluster.bootstrap_servers,
                "bootstrap_controllers": cluster.bootstrap_controllers,
                "brokers": {b: n.up for b, n in st.brokers.items()},
                "controllers": {c: n.up for c, n in st.controllers.items()},
                "active_controller": st.active_controller,
                "topics": len(st.topics),
                "partitions": sum(len(t.partitions) for t in st.topics.values()),
                "speed": cluster.speed,
                "faults": cluster.faults.describe(),
                "broker_config_lag_s": st.broker_config_lag_s,
            }
    if cmd in ("stop-broker", "start-broker", "stop-controller", "start-controller"):
        getattr(cluster, cmd.replace("-", "_"))(int(args[0]))
        return {}
    if cmd == "freeze-broker":
        cluster.freeze_broker(int(args[0]), fenced=bool(opts.get("fenced")))
        return {}
    if cmd == "thaw-broker":
        cluster.thaw_broker(int(args[0]))
        return {}
    if cmd == "fault":
        cluster.inject_fault(
            args[0],
            node=opts.get("node"),
            delay_s=float(opts.get("delay_s") or 0),
            error_code=opts.get("error_code"),
            count=opts.get("count"),
        )
        return {}
    if cmd == "clear-faults":
        cluster.clear_faults()
        return {}
    if cmd == "config-lag":
        cluster.set_broker_config_lag(float(args[0]))
        return {}
    if cmd == "advance":
        cluster.advance(float(args[0]))
        return {}
    if cmd == "synthetic":
        cluster.produce_synthetic(args[0], float(args[1]))
        return {}
    if cmd == "speed":
        cluster.speed = float(args[0])
        return {}
    if cmd == "hang-txn":  # args: topic, partition[, records[, age_ms]] (or opts: records, age_ms)
        from sandbox.testing import hanging_transaction

        records = opts.get("records") or (args[2] if len(args) > 2 else 1)
        age_ms = opts.get("age_ms") or (args[3] if len(args) > 3 else 0)
        return hanging_transaction(cluster, args[0], int(args[1]), int(records), int(age_ms))
    if cmd == "save":
        from sandbox.persist import save_state

        path = args[0] if args else cluster.state_file
        if not path:
            raise ValueError("no state file given")
        save_state(cluster, path)
        return {"path": path}
    raise ValueError(f"unknown command {cmd!r}; known: {', '.join(COMMANDS)}")


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        cluster = self.server.cluster  # type: ignore[attr-defined]
        for line in self.rfile:
            try:
                req = json.loads(line)
                out = {
                    "ok": True,
                    **run_command(cluster, req["cmd"], req.get("args", []), req.get("opts", {})),
                }
            except Exception as exc:  # report, keep serving
                out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            self.wfile.write(json.dumps(out).encode() + b"\n")


class ControlServer(socketserver.ThreadingTCPServer):
    """Serves control commands for one cluster in a daemon thread."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, cluster: SandboxCluster, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.cluster = cluster
        self.thread = threading.Thread(target=self.serve_forever, name="sandbox-control", daemon=True)

    @property
    def address(self) -> str:
        """host:port of the control socket."""
        host, port = self.server_address[:2]
        return f"{host}:{port}"

    def start(self) -> ControlServer:
        """Start serving."""
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()


def send(
    address: str,
    cmd: str,
    args: list[Any] | None = None,
    opts: dict[str, Any] | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Client side: send one command and return the decoded answer."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(json.dumps({"cmd": cmd, "args": args or [], "opts": opts or {}}).encode() + b"\n")
        with sock.makefile("rb") as fh:
            return json.loads(fh.readline())
