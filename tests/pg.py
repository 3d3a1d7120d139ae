"""The PostgreSQL pass: Debian's PostgreSQL server, started for the test session in a temp dir.

``CONSOLE_TEST_DB=postgres`` makes the session's Django test database a real PostgreSQL instead of
the SQLite file: ``initdb`` + ``pg_ctl`` start a throwaway server on a free loopback port (as the
SSO tests start slapd), pytest-django creates ``test_console`` in it, and the server and its
directory are removed when the session ends. The binaries are Debian's (package ``postgresql``,
``/usr/lib/postgresql/<version>/bin``; ``CONSOLE_TEST_PG_BIN`` names another directory). When they
are missing, every database test fails with one message saying what to install: never a skip.

PostgreSQL refuses to run as root; as root the server runs as the ``postgres`` user the Debian
package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ENV = "CONSOLE_TEST_DB"
BIN_ENV = "CONSOLE_TEST_PG_BIN"
SERVER_USER = "postgres"  # who runs the server when the tests run as root
INSTALL_HINT = (
    "apt-get install -y --no-install-recommends postgresql "
    "(Debian's server binaries land in /usr/lib/postgresql/<version>/bin)"
)


def requested() -> bool:
    """Whether this session's tests run on PostgreSQL (``CONSOLE_TEST_DB=postgres``)."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in ("", "sqlite"):
        return False
    if value in ("postgres", "postgresql"):
        return True
    raise pytest.UsageError(f"{ENV}={value!r}: use 'postgres' or 'sqlite'")


def bin_dir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: ``$CONSOLE_TEST_PG_BIN`` or Debian's newest."""
    if os.environ.get(BIN_ENV):
        found = Path(os.environ[BIN_ENV])
        return found if (found / "initdb").exists() else None
    candidates = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0,
    )
    return candidates[-1] if candidates else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Server:
    host: str
    port: int
    user: str
    workdir: Path

    def django_settings(self, name: str = "console") -> dict[str, object]:
        """What replaces the DATABASES entry's connection keys (the test database is ``test_<name>``)."""
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": self.user,
            "PASSWORD": "",
            "HOST": self.host,
            "PORT": str(self.port),
            "OPTIONS": {},
            "CONN_MAX_AGE": 0,
        }


def _run(args: list[str], user: str | None, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(args, user=user, capture_output=True, text=True, timeout=120, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr or done.stdout}")
    return done


def start() -> Server:
    """initdb a fresh cluster in a temp dir and start it on a free loopback port (trust auth)."""
    bindir = bin_dir()
    if bindir is None:
        where = os.environ.get(BIN_ENV) or "/usr/lib/postgresql/*/bin"
        pytest.fail(
            f"{ENV}=postgres needs PostgreSQL's server binaries (initdb, pg_ctl) and found none in "
            f"{where}: {INSTALL_HINT}",
            pytrace=False,
        )
    user = SERVER_USER if os.geteuid() == 0 else None
    if user is not None:
        try:
            pwd.getpwnam(user)
        except KeyError:
            pytest.fail(
                f"PostgreSQL refuses to run as root and there is no '{user}' user to run it: {INSTALL_HINT}",
                pytrace=False,
            )
    # Not under pytest's basetemp: as root that is mode 0700 and the postgres user could not enter it.
    workdir = Path(tempfile.mkdtemp(prefix="console-test-pg-"))
    if user is not None:
        shutil.chown(workdir, user=user)
    try:
        return _initdb_and_start(bindir, user, workdir)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        log = workdir / "server.log"
        tail = log.read_text()[-2000:] if log.exists() else ""
        shutil.rmtree(workdir, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL for the tests: {exc}\n{tail}", pytrace=False)


def _initdb_and_start(bindir: Path, user: str | None, workdir: Path) -> Server:
    data, sockets, log = workdir / "data", workdir / "sock", workdir / "server.log"
    sockets.mkdir()
    if user is not None:
        shutil.chown(sockets, user=user)
    db_user = user or "postgres"
    _run(
        [str(bindir / "initdb"), "-D", str(data), "-U", db_user, "--auth=trust", "-E", "UTF8",
         "--locale=C", "--no-sync"],
        user,
    )  # fmt: skip
    port = free_port()
    options = " ".join(
        [
            f"-p {port}",
            "-c listen_addresses=127.0.0.1",
            f"-c unix_socket_directories={sockets}",
            "-c fsync=off",  # a throwaway cluster: durability only costs time
            "-c synchronous_commit=off",
            "-c full_page_writes=off",
            "-c max_connections=100",
        ]
    )
    _run(
        [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start"],
        user,
    )
    return Server("127.0.0.1", port, db_user, workdir)


def stop(server: Server) -> None:
    bindir = bin_dir()
    user = SERVER_USER if os.geteuid() == 0 else None
    if bindir is not None:
        subprocess.run(
            [str(bindir / "pg_ctl"), "-D", str(server.workdir / "data"), "-m", "fast", "-w", "stop"],
            user=user,
            capture_output=True,
            timeout=60,
        )
    shutil.rmtree(server.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """A throwaway PostgreSQL server for the session (see the module's docstring)."""
    server = start()
    try:
        yield server
    finally:
        stop(server)


def point_django_at(server: Server) -> None:
    """Make the ``default`` database the server (before pytest-django creates the test database).

    Django's connection handler keeps the settings dict it was given and filled with defaults, so
    the connection keys are replaced in that dict and any connection opened on SQLite is dropped.
    """
    from django.conf import settings
    from django.db import connections

    db = settings.DATABASES["default"]
    db.update(server.django_settings())
    db.setdefault("TEST", {})["NAME"] = "test_console"
    connections.close_all()
    try:
        del connections["default"]
    except AttributeError:  # no connection was opened in this thread
        pass


def database_text(connection) -> str:
    """Everything the database holds, as text, read through ``connection`` (so a test's own
    uncommitted rows are in it): SQLite's SQL dump, or on PostgreSQL every row of every table
    (bytes as hex, as a dump would show them)."""
    if connection.vendor == "sqlite":
        return "\n".join(connection.connection.iterdump())
    lines = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in cursor.fetchall():
                cells = [bytes(v).hex() if isinstance(v, bytes | memoryview) else str(v) for v in row]
                lines.append(f"{table}: " + " | ".join(cells))
    return "\n".join(lines)
