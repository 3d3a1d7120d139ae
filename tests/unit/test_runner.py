"""The `make run` supervisor's own parts: planning, ports, process groups, signals. No Django DB."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from console import processes, runner
from console.processes import ChildFailed, Supervisor

REPO = Path(runner.__file__).resolve().parent.parent


def _listening_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def _wait_gone(pgid: int, timeout: float = 5) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not processes.group_members(pgid):
            return True
        time.sleep(0.05)
    return False


def _wait_members(pgid: int, count: int, timeout: float = 5) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        members = processes.group_members(pgid)
        if len(members) >= count:
            return members
        time.sleep(0.05)
    return processes.group_members(pgid)


@pytest.fixture
def sup():
    supervisor = Supervisor(out=io.StringIO(), grace_s=2)
    yield supervisor
    supervisor.shutdown()  # never leave a test's children behind


# ------------------------------------------------------------------ ports


def test_it_sees_a_port_in_use_and_free_again_once_closed():
    sock = _listening_socket()
    port = sock.getsockname()[1]
    assert processes.port_in_use(port)
    sock.close()
    assert not processes.port_in_use(port)


def test_it_lists_only_the_busy_ports_with_their_purpose():
    sock = _listening_socket()
    busy = sock.getsockname()[1]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    try:
        assert processes.busy_ports({busy: "web server", free: "embedded Redis"}) == {busy: "web server"}
    finally:
        sock.close()


def test_it_refuses_to_start_anything_when_a_port_is_taken(monkeypatch, tmp_path, capsys):
    sock = _listening_socket()
    monkeypatch.setattr(runner, "WEB_PORT", sock.getsockname()[1])
    monkeypatch.setenv("CONSOLE_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1")
    monkeypatch.delenv("KAFKA_BOOTSTRAP_CONTROLLERS", raising=False)

    def no_spawn(*args, **kwargs):
        raise AssertionError("nothing may be started when a port is taken")

    monkeypatch.setattr(Supervisor, "spawn", no_spawn)
    try:
        assert runner.main() == 2
    finally:
        sock.close()
    out = capsys.readouterr().out
    assert f"{runner.WEB_PORT} (web server)" in out
    assert "Nothing was started" in out


def test_a_second_run_in_the_same_directory_cannot_take_the_lock(tmp_path):
    first = runner.acquire_lock(tmp_path)
    assert first is not None
    assert runner.acquire_lock(tmp_path) is None
    first.close()
    again = runner.acquire_lock(tmp_path)
    assert again is not None
    again.close()


# ------------------------------------------------------------------ planning


def test_it_plans_embedded_redis_and_the_sandbox_on_a_bare_environment(tmp_path):
    plan = runner.make_plan({}, base_dir=tmp_path)

    assert plan.embedded_redis and plan.sandbox
    assert plan.redis_url == "redis://127.0.0.1:6390/0"
    assert plan.var_dir == tmp_path / "var"
    assert plan.ports[8000] == "web server"
    assert plan.ports[6390] == "embedded Redis"
    assert {19092, 19093, 19094, 19192, 19193, 19194, 19292} <= set(plan.ports)
    assert plan.registrations == []  # the sandbox is registered once it announces its address
    args = plan.sandbox_args()
    assert args[args.index("--brokers") + 1] == "3"
    assert args[args.index("--state") + 1] == str(tmp_path / "var" / "sandbox-state.json")


def test_it_registers_a_real_cluster_and_its_controllers_instead_of_the_sandbox(tmp_path):
    env = {
        "REDIS_URL": "redis://redis:6379/1",
        "KAFKA_BOOTSTRAP_SERVERS": "k1:9092,k2:9092",
        "KAFKA_BOOTSTRAP_CONTROLLERS": "c1:9093",
        "CONSOLE_CLUSTER_NAME": "prod",
    }
    plan = runner.make_plan(env, base_dir=tmp_path)

    assert not plan.embedded_redis and not plan.sandbox
    assert plan.redis_url == "redis://redis:6379/1"
    assert plan.ports == {8000: "web server"}
    assert plan.registrations == [
        ["--name", "prod", "--bootstrap-servers", "k1:9092,k2:9092", "--if-missing"],
        ["--name", "prod-controllers", "--bootstrap-controllers", "c1:9093", "--if-missing"],
    ]


def test_a_real_cluster_without_a_name_is_called_default(tmp_path):
    plan = runner.make_plan({"KAFKA_BOOTSTRAP_CONTROLLERS": "c1:9093"}, base_dir=tmp_path)

    assert not plan.sandbox
    assert plan.registrations == [
        ["--name", "default-controllers", "--bootstrap-controllers", "c1:9093", "--if-missing"]
    ]


def test_it_describes_how_a_child_ended():
    assert processes.describe_exit(3) == "exit code 3"
    assert processes.describe_exit(-9) == "killed by SIGKILL"


def test_it_reads_the_sandbox_announcements_and_nothing_else():
    assert runner.parse_bootstrap("BOOTSTRAP_SERVERS=127.0.0.1:19092,127.0.0.1:19093\n") == (
        "BOOTSTRAP_SERVERS",
        "127.0.0.1:19092,127.0.0.1:19093",
    )
    assert runner.parse_bootstrap("BOOTSTRAP_CONTROLLERS=127.0.0.1:19095") == (
        "BOOTSTRAP_CONTROLLERS",
        "127.0.0.1:19095",
    )
    assert runner.parse_bootstrap("BOOTSTRAP_SERVERS=") is None
    assert runner.parse_bootstrap("broker 1 listening on 127.0.0.1:19092") is None


# ------------------------------------------------------------------ children


def test_it_prefixes_every_output_line_with_the_child_name(sup):
    sup.run_once("setup", ["sh", "-c", "echo one; echo two >&2"])

    lines = sup.out.getvalue().splitlines()
    assert "   setup | one" in lines
    assert "   setup | two" in lines


def test_it_runs_each_child_in_its_own_process_group(sup):
    child = sup.spawn("sleeper", ["sleep", "300"])

    assert os.getpgid(child.popen.pid) == child.popen.pid
    assert os.getpgid(child.popen.pid) != os.getpgrp()


def test_it_stops_a_whole_group_including_grandchildren_and_nothing_else(sup):
    bystander = subprocess.Popen(["sleep", "300"])
    try:
        child = sup.spawn("family", ["sh", "-c", "sleep 300 & sleep 300 & wait"])
        members = _wait_members(child.pgid, 3)
        assert len(members) == 3

        assert sup.shutdown() == []

        assert processes.group_members(child.pgid) == []
        assert bystander.poll() is None  # not ours: untouched
    finally:
        bystander.kill()
        bystander.wait()


def test_it_kills_a_group_that_ignores_sigterm_after_the_grace_period(sup):
    sup.grace_s = 0.5
    child = sup.spawn("stubborn", ["sh", "-c", "trap '' TERM; sleep 300 & sleep 300; wait"])
    assert len(_wait_members(child.pgid, 2)) >= 2

    started = time.monotonic()
    assert sup.shutdown() == ["stubborn"]

    assert time.monotonic() - started < 5
    assert processes.group_members(child.pgid) == []


def test_it_stops_apps_before_infrastructure(sup):
    sup.grace_s = 0.5
    infra = sup.spawn("redis", ["sleep", "300"], tier=processes.TIER_INFRA)
    app = sup.spawn("worker", ["sh", "-c", "trap '' TERM; sleep 300"])
    time.sleep(0.2)

    assert sup.shutdown() == ["worker"]
    # the app tier was killed after its grace while the infra tier still ran, then infra got TERM
    assert app.popen.returncode == -signal.SIGKILL
    assert infra.popen.returncode == -signal.SIGTERM


def test_a_failed_setup_step_names_itself_and_its_exit_code(sup):
    with pytest.raises(ChildFailed, match=r"`manage.py migrate` failed with exit code 4"):
        sup.run_once("setup", ["sh", "-c", "exit 4"], "manage.py migrate")


def test_waiting_gives_up_when_a_child_dies_meanwhile(sup):
    sup.spawn("sandbox", ["sh", "-c", "echo starting; exit 1"])

    with pytest.raises(ChildFailed, match=r"sandbox exited \(exit code 1\) while waiting for the sandbox"):
        sup.wait_until("the sandbox", lambda: False, timeout_s=10)


SCRIPT = textwrap.dedent(
    """
    import sys
    from console.processes import Supervisor, Interrupted
    sup = Supervisor(grace_s=2)
    sup.install_signal_handlers()
    a = sup.spawn("a", ["sh", "-c", "sleep 300 & sleep 300 & wait"])
    b = sup.spawn("b", ["sleep", "300"], tier=0)
    print("PGIDS", a.pgid, b.pgid, flush=True)
    try:
        sup.supervise()
    except Interrupted as exc:
        print("INTERRUPTED", exc, flush=True)
    sup.shutdown()
    print("LEFT", sup.leftovers(), flush=True)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_to_the_supervisor_stops_every_group_it_started(sig):
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], cwd=REPO, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    pgids: list[int] = []
    try:
        first = proc.stdout.readline().split()
        assert first[0] == "PGIDS", first
        pgids = [int(p) for p in first[1:]]
        assert len(_wait_members(pgids[0], 3)) == 3

        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)

        assert f"INTERRUPTED {signal.Signals(sig).name}" in out
        assert "LEFT {}" in out
        assert all(_wait_gone(pgid) for pgid in pgids)
        assert proc.returncode == 0
    finally:
        for pgid in [proc.pid, *pgids]:
            if processes.group_members(pgid):
                os.killpg(pgid, signal.SIGKILL)
        proc.wait()
