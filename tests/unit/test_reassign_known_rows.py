"""A poll cycle's partition rows (``store.known_rows``): the rows ``partition_rows`` reads, of which
only the ids are read again once known (a row's topic, partition, original and target are never
rewritten: a 10,000-partition poll parsed 20,000 replica lists every cycle)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.models import Operation
from console.models.reassignment import Reassignment, ReassignmentPartition
from console.reassignment import store
from tests.conftest import make_personas

pytestmark = pytest.mark.django_db


@pytest.fixture
def reassignment(offline_cluster):
    people = make_personas(offline_cluster)
    op = Operation.objects.create(kind="reassignment", cluster=offline_cluster, created_by=people["operator"])
    r = Reassignment.objects.create(
        operation=op, cluster=offline_cluster, stage="moving", partitions_total=3000
    )
    ReassignmentPartition.objects.bulk_create(
        ReassignmentPartition(
            reassignment=r,
            topic=f"t{n % 7}",
            partition=n,
            original=[n % 5, (n + 1) % 5],
            target=[(n + 2) % 5, n % 5, (n + 3) % 5][: 2 + n % 2],
            state="moving" if n % 4 else "pending",
        )
        for n in range(3000)
    )
    return r


def test_it_gives_the_rows_partition_rows_gives_reading_only_the_new_ones(reassignment):
    r, known = reassignment, {}
    assert store.known_rows(r, ["moving"], known) == store.partition_rows(r, ["moving"])
    assert len(known) == 2250
    # a few settle, a few more start moving: only the rows not known are read
    settled = list(r.partitions.filter(state="moving").values_list("id", flat=True)[:10])
    started = list(r.partitions.filter(state="pending").values_list("id", flat=True)[:5])
    ReassignmentPartition.objects.filter(pk__in=settled).update(state="done")
    ReassignmentPartition.objects.filter(pk__in=started).update(state="moving")
    with CaptureQueriesContext(connection) as queries:
        rows = store.known_rows(r, ["moving"], known)
    assert rows == store.partition_rows(r, ["moving"])
    assert len(rows) == 2245 and len(known) == 2255
    assert len(queries) == 2  # the ids, then the 5 new rows
    with CaptureQueriesContext(connection) as queries:
        assert store.known_rows(r, ["moving"], known) == rows
    assert len(queries) == 1
