"""Command line: run a sandbox cluster, or send it control commands.

python -m sandbox --brokers 3 --controllers 3 --port 19092 --speed 10 --demo [--state FILE]
python -m sandbox --tls-dir DIR [--mtls] [--sasl-users admin:admin-secret] [--oauth-jwks-url URL ...]
python -m sandbox ctl [--control 127.0.0.1:19292] stop-broker 2
python -m sandbox --clusters 50 --brokers 3 --controllers 1 --topics 40 --partitions 500 [--ready-file F]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading

from sandbox.cluster import DEFAULT_PORT, SandboxCluster
from sandbox.security import SandboxSecurity

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
    _fleet_args(ap)
    _security_args(ap)
    a = ap.parse_args(argv)
    if a.clusters is not None:
        if a.tls_dir or a.sasl_users or a.oauth_jwks_url or a.state:
            ap.error("--clusters serves plaintext listeners and keeps no state file")
        return _run_fleet(a)
    try:
        security, files = _security(a)
    except ValueError as exc:
        ap.error(str(exc))
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
        security=security,
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
    if security is not None:
        print(f"SECURITY_PROTOCOL={security.protocol}")
        if security.sasl:
            print(f"SASL_MECHANISMS={','.join(security.enabled_mechanisms)}")
        for key, name in (
            ("SSL_CA", "ca.pem"),
            ("SSL_CERTIFICATE", "client.pem"),
            ("SSL_KEY", "client-key.pem"),
        ):
            if name in files and (key == "SSL_CA" or security.client_ca_pem):
                print(f"{key}_LOCATION={files[name]}")
        sys.stdout.flush()
    _wait_for_signal()
    control.stop()
    cluster.shutdown()
    print("sandbox stopped", flush=True)
    return 0


def _wait_for_signal() -> None:
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    done.wait()


def _fleet_args(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("many clusters in one process (one event loop; ephemeral ports)")
    g.add_argument(
        "--clusters",
        type=int,
        default=None,
        help="serve N independent clusters (fleet-01..), each with --brokers/--controllers; prints a JSON "
        "map name -> cluster_id, bootstrap_servers, bootstrap_controllers, control, topics, partitions",
    )
    g.add_argument("--topics", type=int, default=0, help="with --clusters: topics per cluster")
    g.add_argument("--partitions", type=int, default=1, help="with --clusters: partitions per topic")
    g.add_argument(
        "--rf", type=int, default=3, help="with --clusters: replication factor (at most --brokers)"
    )
    g.add_argument(
        "--ready-file", default=None, help="with --clusters: write the JSON map there once serving"
    )


def _run_fleet(a: argparse.Namespace) -> int:
    """``--clusters N``: a SandboxFleet, a control socket per cluster, the map printed (one line)."""
    import logging

    from sandbox.control import ControlServer
    from sandbox.fleet import SandboxFleet

    logging.basicConfig(level=a.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    fleet = SandboxFleet(
        a.clusters,
        brokers=a.brokers,
        controllers=a.controllers,
        topics=a.topics,
        partitions=a.partitions,
        replication_factor=a.rf,
        speed=a.speed,
        racks=[r for r in a.racks.split(",") if r] or None,
        seed=a.seed,
    ).start()
    if a.demo:
        from sandbox.demo import load_demo

        for cluster in fleet.clusters.values():
            load_demo(cluster)
    controls = {name: ControlServer(c, 0).start() for name, c in fleet.clusters.items()}
    described = fleet.describe()
    for name, entry in described.items():
        entry["control"] = controls[name].address
    text = json.dumps(described, sort_keys=True)
    if a.ready_file:  # whole or absent: written aside, then renamed
        with open(a.ready_file + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(a.ready_file + ".tmp", a.ready_file)
    print(text, flush=True)
    _wait_for_signal()
    stopping = [threading.Thread(target=c.stop) for c in controls.values()]  # each waits up to 0.5 s
    for t in stopping:
        t.start()
    for t in stopping:
        t.join()
    fleet.shutdown()
    print("sandbox fleet stopped", flush=True)
    return 0


def _security_args(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("secured listeners (every broker and controller)")
    g.add_argument(
        "--tls-dir",
        default=None,
        help="serve TLS (SSL, or SASL_SSL with SASL options): a CA, server and client certificates are "
        "written to DIR (ca.pem, server.pem, client.pem and their keys; kept while valid)",
    )
    g.add_argument(
        "--mtls", action="store_true", help="require client certificates from DIR's CA (needs --tls-dir)"
    )
    g.add_argument(
        "--sasl-users",
        default=None,
        help="SASL PLAIN/SCRAM users, USER:PASSWORD[,USER:PASSWORD...] (SASL_PLAINTEXT, or SASL_SSL with --tls-dir)",
    )
    g.add_argument(
        "--sasl-mechanisms",
        default="PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        help="sasl.enabled.mechanisms (OAUTHBEARER only with --oauth-jwks-url)",
    )
    g.add_argument("--oauth-jwks-url", default=None, help="OAUTHBEARER: the JWKS that signs valid tokens")
    g.add_argument("--oauth-audience", default=None, help="OAUTHBEARER: the audience tokens must name")
    g.add_argument("--oauth-issuer", default=None, help="OAUTHBEARER: the issuer tokens must name")


def _security(a: argparse.Namespace) -> tuple[SandboxSecurity | None, dict[str, str]]:
    """The listeners' security from the command line, and the TLS files written (by name)."""
    if a.mtls and not a.tls_dir:
        raise ValueError("--mtls needs --tls-dir")
    users: dict[str, str] = {}
    for pair in (a.sasl_users or "").split(","):
        if pair:
            user, sep, password = pair.partition(":")
            if not (user and sep and password):
                raise ValueError("--sasl-users takes USER:PASSWORD pairs separated by commas")
            users[user] = password
    sasl = bool(users or a.oauth_jwks_url)
    if not (a.tls_dir or sasl):
        return None, {}
    files: dict[str, str] = {}
    pems: dict[str, str] = {}
    if a.tls_dir:
        from sandbox.pki import tls_dir

        files = {os.path.basename(p): p for p in tls_dir(a.tls_dir).values()}
        for name in ("ca.pem", "server.pem", "server-key.pem"):
            with open(files[name], encoding="utf-8") as fh:
                pems[name] = fh.read()
    protocol = ("SASL_SSL" if a.tls_dir else "SASL_PLAINTEXT") if sasl else "SSL"
    mechanisms = tuple(m.strip().upper() for m in a.sasl_mechanisms.split(",") if m.strip())
    security = SandboxSecurity(
        protocol=protocol,
        server_cert_pem=pems.get("server.pem"),
        server_key_pem=pems.get("server-key.pem"),
        client_ca_pem=pems["ca.pem"] if a.mtls else None,
        mechanisms=mechanisms if users else tuple(m for m in mechanisms if m == "OAUTHBEARER"),
        users=users,
        oauth_jwks_url=a.oauth_jwks_url,
        oauth_audience=a.oauth_audience,
        oauth_issuer=a.oauth_issuer,
    )
    return security, files


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
