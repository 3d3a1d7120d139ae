"""``python -m sandbox``: prints its endpoints, obeys ``ctl`` commands, persists state, exits on SIGTERM."""

from __future__ import annotations

import subprocess
import sys

from confluent_kafka.admin import AdminClient

from tests.sandbox.conftest import ROOT, start_cli, stop_cli

pytestmark = []


def _ctl(control: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", "ctl", "--control", control, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=20,
    )


def test_it_runs_the_demo_and_takes_faults_from_the_command_line(tmp_path):
    state = str(tmp_path / "state.json")
    proc, info = start_cli("--demo", "--state", state, "--racks", "r1,r2,r3")
    try:
        assert len(info["BOOTSTRAP_SERVERS"].split(",")) == 3
        assert len(info["BOOTSTRAP_CONTROLLERS"].split(",")) == 3
        admin = AdminClient({"bootstrap.servers": info["BOOTSTRAP_SERVERS"]})
        md = admin.list_topics(timeout=10)
        assert {"orders", "payments.events", "__consumer_offsets"} <= set(md.topics)
        assert md.topics["__consumer_offsets"].partitions[0].replicas
        assert _ctl(info["CONTROL"], "stop-broker", "2").returncode == 0
        assert sorted(admin.list_topics(timeout=10).brokers) == [1, 3]
        bad = _ctl(info["CONTROL"], "stop-broker", "42")
        assert bad.returncode == 1 and "KeyError" in bad.stdout
        assert _ctl(info["CONTROL"], "fault", "CreateTopics", "--error", "38", "--count", "1").returncode == 0
        assert '"error_code": 38' in _ctl(info["CONTROL"], "status").stdout
    finally:
        assert "sandbox stopped" in stop_cli(proc)
    proc, info = start_cli("--state", state)
    try:
        admin = AdminClient({"bootstrap.servers": info["BOOTSTRAP_SERVERS"]})
        md = admin.list_topics(timeout=10)
        assert len(md.topics["orders"].partitions) == 12
        assert admin.describe_cluster().result(10).nodes[0].rack == "r1"
        assert info["CLUSTER_ID"]
    finally:
        stop_cli(proc)
