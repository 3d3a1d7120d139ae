"""scripts/system-deps: what `make test` installs on a fresh Debian machine. A stand-in apt-get (first on
PATH) records what it is asked to do, so the test installs nothing; CHROMIUM_PATH points at a missing
browser to make one package missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "system-deps"


@pytest.fixture
def fake_apt(tmp_path) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt-calls"
    apt = bin_dir / "apt-get"
    apt.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    apt.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return env, calls


def _run(
    profile: str, env: dict[str, str], user: list[str] | None = None, script: Path = SCRIPT
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*(user or []), str(script), profile], env=env, capture_output=True, text=True, timeout=60
    )


def test_it_does_nothing_and_says_nothing_when_everything_is_installed(fake_apt):
    env, calls = fake_apt

    for profile in ("run", "test"):
        done = _run(profile, env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not calls.exists()  # not even apt-get update


@pytest.mark.skipif(os.geteuid() != 0, reason="installing is what root does; the next test covers the rest")
def test_as_root_it_installs_exactly_what_is_missing(fake_apt):
    env, calls = fake_apt
    env["CHROMIUM_PATH"] = "/nonexistent/chromium"

    done = _run("test", env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "make test: installing chromium"
    assert calls.read_text().splitlines() == ["update -q", "install -y -q --no-install-recommends chromium"]


def test_as_a_user_it_names_the_missing_packages_and_the_command_and_fails(fake_apt):
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) runs the script as another user"
    env, calls = fake_apt
    env["CHROMIUM_PATH"] = "/nonexistent/chromium"
    user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []

    with tempfile.TemporaryDirectory() as public:  # the checkout may sit where that user cannot read (/root)
        os.chmod(public, 0o755)
        script = Path(shutil.copy(SCRIPT, public))
        done = _run("test", env, user, script)

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "make test needs these system packages (Debian names): chromium",
        "Install them, e.g.: sudo apt-get install -y --no-install-recommends chromium",
        "(or run make test as root on Debian, which installs them)",
    ]
    assert not calls.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="installing is what root does")
def test_it_installs_the_compiler_and_python_headers_for_make_run_too(fake_apt, tmp_path):
    """`make run`'s pip install builds the console's C extension (console/kafka/_metadata.c): a machine
    with no gcc and a Python without its headers gets both, not only under `make test`."""
    env, calls = fake_apt
    bin_dir = Path(env["PATH"].split(":")[0])
    for tool in ("bash", "id", "java"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    python = bin_dir / "python3.11"  # a Python whose headers are not installed
    python.write_text(
        f'#!/bin/sh\ncase "$2" in *Python.h*) exit 1;; esac\nexec {os.path.realpath(sys.executable)} "$@"\n'
    )
    python.chmod(0o755)
    env.update(PATH=str(bin_dir), PY="python3.11")

    done = _run("run", env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:1] == ["make run: installing gcc python3.11-dev"]
    assert calls.read_text().splitlines() == [
        "update -q",
        "install -y -q --no-install-recommends gcc python3.11-dev",
    ]
