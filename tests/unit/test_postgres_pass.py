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
