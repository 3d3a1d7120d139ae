"""One whole-cluster metadata copy per host (issue 35): a process that reads Kafka writes what it read
to a file; another process (here: this process with its own cache emptied, and a second Python process)
maps that file instead of asking Kafka, sees the same topics, partitions and counts, and never takes a
copy older than its own last change through the console."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest

from console.kafka import KafkaOperationError, NewTopic, metadata_file
from console.topics import cache

pytestmark = pytest.mark.django_db


def _forget_process_copy() -> None:
    """What another process has: no snapshot of its own (the host's file stays)."""
    with cache._guard:
        for key in list(cache._cache):
            cache._drop(key)


def _described(snap) -> list:
    return [
        (
            t.name,
            t.internal,
            [(p.id, p.leader, p.replicas, p.isr, p.offline) for p in t.partitions],
            t.health(),
        )
        for t in snap.metadata.topics
    ]


@pytest.fixture
def host_shared(settings, fresh_metadata_cache):
    settings.TOPIC_METADATA_HOST_SHARED = True
    yield


def _no_kafka(monkeypatch):
    asked = []
    monkeypatch.setattr(
        cache, "_fetch", lambda cluster, on_names: asked.append(cluster) or pytest.fail("asked Kafka")
    )
    return asked


def test_another_process_maps_the_hosts_copy_instead_of_asking_kafka(host_shared, kafka_cluster, monkeypatch):
    first = cache.get_snapshot(kafka_cluster)
    cache.wait_shared()
    path = cache._host_path(cache._key(kafka_cluster))
    assert path is not None and path.exists()
    _forget_process_copy()
    _no_kafka(monkeypatch)
    second = cache.get_snapshot(kafka_cluster)
    assert second is not first
    assert second.names == first.names
    assert _described(second) == _described(first)
    assert second.metadata.brokers == first.metadata.brokers
    assert second.metadata.cluster_id == first.metadata.cluster_id
    assert second.metadata.topics.broker_counts == first.metadata.topics.broker_counts
    assert abs(second.fetched_at - first.fetched_at) < 5 and second.age_s >= 0


def test_a_change_through_the_console_is_never_hidden_by_an_older_copy(host_shared, kafka_cluster, sandbox):
    from console.clusters.actions import gateway_for

    before = cache.get_snapshot(kafka_cluster)
    cache.wait_shared()
    path = cache._host_path(cache._key(kafka_cluster))
    stale = path.read_bytes()
    name = f"hostcopy-{uuid.uuid4().hex[:8]}"
    assert not isinstance(
        gateway_for(kafka_cluster).create_topics([NewTopic(name, 1, 1)])[name], KafkaOperationError
    )
    cache.invalidate(kafka_cluster)
    assert not path.exists()
    # another process's read, started before the change, lands after it
    path.write_bytes(stale)
    after = cache.get_snapshot(kafka_cluster)
    cache.wait_shared()
    assert name not in before.names and name in after.names
    # and the host's copy is now the fresh read
    _forget_process_copy()
    assert name in cache.get_snapshot(kafka_cluster).names
    gateway_for(kafka_cluster).delete_topics([name])
    cache.invalidate(kafka_cluster)


def test_an_expired_or_unreadable_copy_is_not_used(host_shared, kafka_cluster, monkeypatch, settings):
    cache.get_snapshot(kafka_cluster)
    cache.wait_shared()
    path = cache._host_path(cache._key(kafka_cluster))
    good = path.read_bytes()
    for bad in (b"", good[:5], b"something else entirely" + good[23:], good[: len(good) // 2]):
        path.write_bytes(bad)
        assert metadata_file.read(path) is None or bad == good
    path.write_bytes(good)
    _forget_process_copy()
    monkeypatch.setattr(cache, "TTL_S", 0.0)  # every copy is expired
    asked = []
    real = cache._fetch
    monkeypatch.setattr(cache, "_fetch", lambda c, n: asked.append(1) or real(c, n))
    cache.get_snapshot(kafka_cluster)
    assert asked == [1]


def test_not_shared_when_turned_off(settings, fresh_metadata_cache, kafka_cluster):
    settings.TOPIC_METADATA_HOST_SHARED = False
    cache.get_snapshot(kafka_cluster)
    cache.wait_shared()
    assert not cache.HOST_DIR.exists() or not any(cache.HOST_DIR.glob("*.md"))


CHILD = """
import json, os, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
django.setup()
from console.kafka import metadata_file
from pathlib import Path
got = metadata_file.read(Path(sys.argv[1]))
md, started = got
print(json.dumps([len(md.topics), sorted(t.name for t in md.topics)[:3], md.cluster_id,
                  sum(len(t.partitions) for t in md.topics)]))
"""


def test_a_second_python_process_reads_the_same_snapshot(host_shared, kafka_cluster):
    snap = cache.get_snapshot(kafka_cluster)
    cache.wait_shared()
    path = cache._host_path(cache._key(kafka_cluster))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == [
        len(snap.names),
        snap.names[:3],
        snap.metadata.cluster_id,
        sum(len(t.partitions) for t in snap.metadata.topics),
    ]
    assert time.time() - metadata_file.read(path)[1] < cache.TTL_S


def test_a_var_dir_it_cannot_write_leaves_each_process_reading_for_itself(
    host_shared, kafka_cluster, monkeypatch, tmp_path
):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the directory should be")
    monkeypatch.setattr(cache, "HOST_DIR", blocked / "metadata")
    snap = cache.get_snapshot(kafka_cluster)
    assert snap.metadata.cluster_id and not (blocked / "metadata").exists()


def _writer_held():
    """Hold the process's copy writer (its one thread) until the returned event is set."""
    import threading

    go = threading.Event()
    cache._writer().submit(go.wait, 30)
    return go


def test_the_page_does_not_wait_for_the_copy_and_the_host_waits_for_it(
    host_shared, kafka_cluster, sandbox, monkeypatch
):
    import fcntl

    sandbox.create_topic(f"hostcopy-{uuid.uuid4().hex[:8]}", partitions=3, replication_factor=1)
    go = _writer_held()
    try:
        snap = cache.get_snapshot(kafka_cluster)  # answers while the copy is still to be written
        path = cache._host_path(cache._key(kafka_cluster))
        assert snap.names and not path.exists()
        # the host's other processes that missed wait on the lock until the copy is there
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            go.set()
            cache.wait_shared()
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    finally:
        go.set()
    assert path.exists()
    _forget_process_copy()
    _no_kafka(monkeypatch)
    assert cache.get_snapshot(kafka_cluster).names == snap.names


def test_a_copy_still_to_be_written_when_the_console_changes_the_cluster_is_not_written(
    host_shared, kafka_cluster
):
    go = _writer_held()
    try:
        cache.get_snapshot(kafka_cluster)
        cache.invalidate(kafka_cluster)
    finally:
        go.set()
    cache.wait_shared()
    assert not cache._host_path(cache._key(kafka_cluster)).exists()


def test_the_copy_is_written_whole_when_the_kernel_takes_less_than_asked(tmp_path, monkeypatch):
    import random

    rng = random.Random(7)
    buffers = [rng.randbytes(rng.randint(0, 3000)) for _ in range(2500)]  # more than one writev's worth
    real = os.writev
    calls = []

    def short(fd, views):
        calls.append(len(views))
        first = views[0]
        return real(fd, [first[: max(1, len(first) // 3)]])

    for name, writev in (("whole", real), ("short", short)):
        monkeypatch.setattr(os, "writev", writev)
        fd = os.open(tmp_path / name, os.O_WRONLY | os.O_CREAT)
        metadata_file._write_all(fd, buffers)
        os.close(fd)
        assert (tmp_path / name).read_bytes() == b"".join(buffers)
    assert max(calls) == metadata_file._IOV


def test_a_forked_worker_writes_with_a_thread_of_its_own():
    """gunicorn and Celery fork their workers: an executor made before the fork has no thread in
    the child, and a copy handed to it would never be written (nor its host lock released)."""
    cache.wait_shared()  # this process's writer exists and has its thread
    pid = os.fork()
    if pid == 0:  # the child: hand the writer something and wait for it
        code = 1
        try:
            cache.wait_shared()
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked process's copy was never written")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
