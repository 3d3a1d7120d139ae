"""``store.update_rows`` writes partition rows as Django's ``bulk_update`` did (every field, JSON
replicas, only the rows named) with one executemany in one transaction: a move whose 10,000
partitions finish in one cycle spent ~9 s in bulk_update's CASE WHEN statements while Kafka's move
was complete and its throttles still set (``bench_throttle_removal``). In ``make test``'s PostgreSQL
pass too (``PG_TESTS``)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.models import Operation
from console.models.reassignment import PartitionState, Reassignment, ReassignmentPartition
from console.reassignment import store
from tests.conftest import make_personas

pytestmark = pytest.mark.django_db
N = 1200


@pytest.fixture
def rows(offline_cluster):
    people = make_personas(offline_cluster)
    op = Operation.objects.create(kind="reassignment", cluster=offline_cluster, created_by=people["operator"])
    r = Reassignment.objects.create(operation=op, cluster=offline_cluster, stage="moving", partitions_total=N)
    ReassignmentPartition.objects.bulk_create(
        ReassignmentPartition(
            reassignment=r, topic=f"t{n % 7}", partition=n, original=[1, 2], target=[2, 3], state="moving"
        )
        for n in range(N)
    )
    return list(r.partitions.order_by("pk"))


def test_it_writes_what_bulk_update_wrote_in_one_statement(rows):
    changed = []
    for n, x in enumerate(rows[: N - 1]):  # the last row is not named: it must stay as it was
        changed.append(
            ReassignmentPartition(
                pk=x.pk,
                bytes_total=10 * n,
                bytes_done=n,
                replicas=[[2, "In sync", n, False], [3, "Behind: 1 KiB", n, True]] if n % 2 else [],
                state=PartitionState.DONE if n % 3 else PartitionState.DIVERGED,
                message="" if n % 3 else f"No reassignment in progress but replicas are [1, {n}]",
            )
        )
    fields = ["bytes_total", "bytes_done", "replicas", "state", "message"]
    with CaptureQueriesContext(connection) as queries:
        store.update_rows(changed, fields)
    assert len([q for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]) <= 1
    got = {x.pk: x for x in ReassignmentPartition.objects.filter(pk__in=[x.pk for x in rows])}
    for want in changed:
        have = got[want.pk]
        assert [getattr(have, f) for f in fields] == [getattr(want, f) for f in fields]
        assert (have.topic, have.original, have.target) == (rows[changed.index(want)].topic, [1, 2], [2, 3])
    last = got[rows[-1].pk]
    assert (last.state, last.bytes_total, last.replicas, last.message) == ("moving", 0, [], "")
    store.update_rows([], fields)  # nothing to write: no statement, no error
