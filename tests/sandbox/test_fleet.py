"""Many clusters in one process: ``SandboxFleet`` serves N independent clusters on one event loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

from kafka.protocol.metadata import MetadataRequest

from sandbox.fleet import SandboxFleet, running_fleet
from tests.sandbox.conftest import ROOT, call


def _metadata(bootstrap: str) -> object:
    return call(bootstrap.split(",")[0], MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)


def test_it_serves_two_independent_clusters_from_one_loop() -> None:
    with running_fleet(2, brokers=2, controllers=1, topics=1, partitions=3) as fleet:
        a, b = fleet.clusters["fleet-01"], fleet.clusters["fleet-02"]
        a.create_topic("only-on-a", 2, 1)
        meta_a, meta_b = _metadata(a.bootstrap_servers), _metadata(b.bootstrap_servers)
        names_a = sorted(t.name for t in meta_a.topics)
        names_b = sorted(t.name for t in meta_b.topics)
        assert names_a == ["fleet.topic-00000", "only-on-a"]
        assert names_b == ["fleet.topic-00000"]
        assert meta_a.cluster_id == a.cluster_id
        assert meta_b.cluster_id == b.cluster_id
        assert a.cluster_id != b.cluster_id
        assert len(set(a.bootstrap_servers.split(",")) | set(b.bootstrap_servers.split(","))) == 4
        loops = {id(c._loop) for c in fleet.clusters.values()}  # one event loop for all
        assert len(loops) == 1
        assert fleet.describe()["fleet-01"] == {
            "cluster_id": a.cluster_id,
            "bootstrap_servers": a.bootstrap_servers,
            "bootstrap_controllers": a.bootstrap_controllers,
            "topics": 2,
            "partitions": 5,
        }


def test_it_keeps_serving_the_others_when_one_cluster_shuts_down() -> None:
    threads_before = threading.active_count()
    with running_fleet(3, brokers=1, controllers=1) as fleet:
        assert threading.active_count() == threads_before + 1  # the one loop thread
        fleet.clusters["fleet-02"].shutdown()
        meta = _metadata(fleet.clusters["fleet-03"].bootstrap_servers)
        assert [b.node_id for b in meta.brokers] == [1]
    assert threading.active_count() == threads_before


def test_it_prints_the_fleet_map_from_the_command_line(tmp_path) -> None:
    ready = tmp_path / "fleet.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sandbox",
            "--clusters",
            "3",
            "--port",
            "0",
            "--speed",
            "0",
            "--brokers",
            "2",
            "--controllers",
            "1",
            "--topics",
            "2",
            "--partitions",
            "4",
            "--ready-file",
            str(ready),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    try:
        line = proc.stdout.readline()
        printed = json.loads(line)
        assert sorted(printed) == ["fleet-01", "fleet-02", "fleet-03"]
        assert json.loads(ready.read_text()) == printed
        ids = {c["cluster_id"] for c in printed.values()}
        assert len(ids) == 3
        for entry in printed.values():
            assert entry["topics"] == 2 and entry["partitions"] == 8
            assert len(entry["bootstrap_servers"].split(",")) == 2
            assert len(entry["bootstrap_controllers"].split(",")) == 1
            meta = _metadata(entry["bootstrap_servers"])
            assert meta.cluster_id == entry["cluster_id"]
            assert sorted(t.name for t in meta.topics) == ["fleet.topic-00000", "fleet.topic-00001"]
    finally:
        proc.terminate()
        proc.wait(30)
    assert proc.returncode == 0


def test_it_is_a_context_manager_and_a_plain_object() -> None:
    fleet = SandboxFleet(1, brokers=1, controllers=0)
    fleet.start()
    try:
        assert list(fleet.bootstrap_servers) == ["fleet-01"]
        fleet.call_on("fleet-01", "create_topic", "by-name", 4, 1)
        before = fleet.clusters["fleet-01"].state.now_ms
        fleet.advance(5.0)
        assert fleet.describe()["fleet-01"]["partitions"] == 4
        assert fleet.clusters["fleet-01"].state.now_ms == before + 5000.0
    finally:
        fleet.shutdown()
