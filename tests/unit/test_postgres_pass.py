"""The PostgreSQL pass (tests/pg.py): CONSOLE_TEST_DB=postgres really puts the tests on PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import connection

from tests import pg


@pytest.mark.django_db
def test_it_runs_on_the_database_the_pass_asked_for():
    from console.models import Operation

    Operation.objects.create(kind="test.vendor", params={"a": 1})
    expected = "postgresql" if pg.requested() else "sqlite"
    assert (connection.vendor, Operation.objects.filter(kind="test.vendor").count()) == (expected, 1)
    if expected == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("select current_database(), inet_server_addr()::text")
            assert cursor.fetchone() == ("test_console", "127.0.0.1/32")


def test_it_fails_with_what_to_install_when_the_server_binaries_are_missing(monkeypatch, tmp_path):
    monkeypatch.setenv(pg.BIN_ENV, str(tmp_path))  # a directory without initdb
    with pytest.raises(pytest.fail.Exception) as failed:
        pg.start()
    assert str(failed.value) == (
        f"CONSOLE_TEST_DB=postgres needs PostgreSQL's server binaries (initdb, pg_ctl) and found none in "
        f"{tmp_path}: apt-get install -y --no-install-recommends postgresql "
        "(Debian's server binaries land in /usr/lib/postgresql/<version>/bin)"
    )


def test_it_refuses_a_database_it_does_not_know(monkeypatch):
    monkeypatch.setenv(pg.ENV, "mysql")
    with pytest.raises(pytest.UsageError, match="CONSOLE_TEST_DB='mysql': use 'postgres' or 'sqlite'"):
        pg.requested()
