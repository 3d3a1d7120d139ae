"""`make run` keeps the console up: a child that exits is restarted, the others keep running; a crash
loop stops everything; the banner ends with the URL and how to log in. Stand-in children (sleep, sh)
take the place of the workers and the web server, so a kill and a restart take well under a second."""

from __future__ import annotations

import functools
import io
import os
import signal
import stat
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from console import processes, runner
from console.processes import ChildFailed, Interrupted, Supervisor


def _until(check, timeout_s: float = 5.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if found := check():
            return found
        time.sleep(0.05)
    return check()


class Running:
    """sup.supervise() in a thread, stopped as a stop signal would stop it."""

    def __init__(self, sup: Supervisor) -> None:
        self.sup = sup
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.sup.supervise()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc

    def stop(self) -> None:
        self.sup.stop_signal = signal.SIGTERM
        self.thread.join(timeout=5)


@pytest.fixture
def sup():
    supervisor = Supervisor(out=io.StringIO(), grace_s=2, backoff_s=0.2, max_restarts=3, window_s=60)
    yield supervisor
    supervisor.shutdown()


def test_it_restarts_a_killed_worker_within_seconds_and_leaves_the_web_server_alone(sup):
    web = sup.spawn("web", ["sleep", "300"])
    worker = sup.spawn("worker-poll", ["sh", "-c", "sleep 300 & sleep 300 & wait"])
    assert len(_until(lambda: len(processes.group_members(worker.pgid)) == 3 and [1])) == 1
    web_pid, old_pgid = web.popen.pid, worker.pgid
    running = Running(sup)
    try:
        os.kill(worker.popen.pid, signal.SIGKILL)  # the group leader only, as `kill -9 <pid>` does

        assert _until(lambda: worker.pgid != old_pgid and worker.popen.poll() is None), sup.out.getvalue()
        assert processes.group_members(old_pgid) == []  # what the killed worker forked went with it
        assert worker.popen.poll() is None and worker.restarts == 1
        assert web.popen.pid == web_pid and web.popen.poll() is None
        assert running.error is None
    finally:
        running.stop()
    out = sup.out.getvalue().splitlines()
    assert out == [
        "  runner | worker-poll exited unexpectedly (killed by SIGKILL); restarting it in 0.2s "
        "(1 of at most 3 exits in 60s); the other processes keep running",
        f"  runner | worker-poll restarted (pid {worker.popen.pid}, restart 1)",
    ]
    assert isinstance(running.error, Interrupted)


def test_the_backoff_doubles_with_each_exit_within_the_window(sup):
    child = sup.spawn("beat", ["sh", "-c", "exit 2"])
    running = Running(sup)
    try:
        assert _until(lambda: child.restarts == 2, 5)
    finally:
        running.stop()
    said = [line for line in sup.out.getvalue().splitlines() if "exited unexpectedly" in line]
    assert said[:2] == [
        "  runner | beat exited unexpectedly (exit code 2); restarting it in 0.2s "
        "(1 of at most 3 exits in 60s); the other processes keep running",
        "  runner | beat exited unexpectedly (exit code 2); restarting it in 0.4s "
        "(2 of at most 3 exits in 60s); the other processes keep running",
    ]


def test_a_crash_loop_stops_supervision_naming_the_child(sup):
    sup.backoff_s = 0.05
    sup.spawn("web", ["sleep", "300"])
    sup.spawn("worker-admin", ["sh", "-c", "echo boom; exit 3"])

    with pytest.raises(ChildFailed) as caught:
        sup.supervise()

    assert str(caught.value) == (
        "worker-admin exited 4 times within 60s (last: exit code 3): a crash loop (more than 3 restarts in 60s)"
    )


def test_a_crash_loop_under_make_run_stops_everything_with_a_clear_message_and_exit_1(
    monkeypatch, tmp_path, capsys
):
    children = {}

    def stand_in_start(sup: Supervisor, plan: runner.Plan, env: dict[str, str]) -> None:
        children["web"] = sup.spawn("web", ["sleep", "300"])
        children["worker"] = sup.spawn("worker-poll", ["sh", "-c", "exit 1"])

    monkeypatch.setenv("CONSOLE_VAR_DIR", str(tmp_path))
    monkeypatch.setattr(runner, "busy_ports", lambda ports: {})
    monkeypatch.setattr(runner, "start", stand_in_start)
    monkeypatch.setattr(runner, "Supervisor", functools.partial(Supervisor, backoff_s=0.05, grace_s=2))
    monkeypatch.setattr(Supervisor, "install_signal_handlers", lambda self: None)

    assert runner.main() == 1

    out = capsys.readouterr().out.splitlines()
    assert len([line for line in out if "worker-poll restarted" in line]) == 5
    assert [line for line in out if "ERROR" in line] == [
        "  runner | ERROR: worker-poll exited 6 times within 60s (last: exit code 1): a crash loop "
        "(more than 5 restarts in 60s); stopping everything ..."
    ]
    assert out[-1] == "  runner | stopped web, worker-poll; no process left running."
    assert children["web"].popen.returncode == -signal.SIGTERM
    assert processes.group_members(children["web"].pgid) == []


def test_a_child_that_exits_while_the_console_starts_stops_everything_at_once(sup):
    sup.spawn("web", ["sh", "-c", "exit 1"])

    with pytest.raises(ChildFailed, match=r"^web exited \(exit code 1\) while starting$"):
        sup.wait_quiet(quiet_s=30, max_s=30)


# ------------------------------------------------------------------ the banner


def test_the_banner_ends_with_the_url_and_the_generated_password_on_the_run_that_made_it(tmp_path):
    file = tmp_path / "admin-password"
    login = runner.admin_login("admin", file, before="", after="s3cret", from_env=False)
    lines = runner.banner("http://127.0.0.1:8000/", login)

    assert lines[-2:] == [
        "console ready at http://127.0.0.1:8000/",
        f"log in as admin with password s3cret (saved in {file}, mode 0600)",
    ]


def test_later_banners_say_where_the_password_is_or_where_it_came_from(tmp_path):
    file = tmp_path / "admin-password"

    assert runner.admin_login("admin", file, "s3cret", "s3cret", from_env=False) == (
        f"log in as admin: its password is saved in {file} (mode 0600)"
    )
    assert runner.admin_login("admin", file, "old", "new", from_env=False) == (
        f"log in as admin with password new (saved in {file}, mode 0600)"
    )
    assert runner.admin_login("root", file, "", "", from_env=True) == (
        "log in as root with the password in CONSOLE_ADMIN_PASSWORD"
    )
    assert runner.admin_login("admin", file, "", "", from_env=False) == (
        f"log in as admin with the password shown when it was created ({file} is gone; "
        "`.venv/bin/python manage.py changepassword admin` sets a new one)"
    )


def test_the_banner_is_printed_after_the_start_up_output_settles(sup):
    sup.spawn("worker", ["sh", "-c", "for i in 1 2 3 4 5; do echo starting $i; sleep 0.2; done; sleep 300"])
    time.sleep(0.1)

    sup.wait_quiet(quiet_s=0.5, max_s=10)
    sup.say("runner", "console ready")

    assert sup.out.getvalue().splitlines()[-1] == "  runner | console ready"
    assert "starting 5" in sup.out.getvalue()


@pytest.mark.django_db
def test_ensure_admin_saves_a_generated_password_readable_by_its_owner_only(tmp_path, monkeypatch):
    monkeypatch.delenv("CONSOLE_ADMIN_PASSWORD", raising=False)
    get_user_model().objects.filter(is_superuser=True).delete()
    file = tmp_path / "var" / "admin-password"
    out = io.StringIO()

    call_command("ensure_admin", "--password-file", str(file), stdout=out)

    password = file.read_text().strip()
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert get_user_model().objects.get(username="admin").check_password(password)
    assert out.getvalue() == f"Created admin 'admin'; its password is saved in {file} (mode 0600).\n"
    assert password not in out.getvalue()

    call_command("ensure_admin", "--password-file", str(file), stdout=io.StringIO())
    assert file.read_text().strip() == password  # an existing admin keeps its password and its file


def test_the_banner_waits_for_each_worker_to_say_it_is_ready():
    ready: set[str] = set()

    runner.note_ready(ready, "worker-poll", "[2026-11-26 14:40:39,788: INFO/MainProcess] poll@vm ready.")
    runner.note_ready(ready, "worker-admin", "[2026-11-26 14:40:39,764: INFO/MainProcess] mingle: all alone")

    assert ready == {"worker-poll"}
