"""The progress fragment's partition rows: built as plain strings, kept in the cache per content.

The rows must read exactly as the template's loop wrote them (the reference below is that loop),
a new poll must show at once (never a cached render of the last one), and nothing of one viewer's
(Cancel, Change throttle) may reach another through the cache.
"""

from __future__ import annotations

import time

import pytest
from django.template import engines
from django.urls import reverse
from django.utils import timezone

from console.models import Operation, OperationState
from console.models.reassignment import Reassignment, ReassignmentPartition
from console.reassignment import progress, store
from console.reassignment.progress import LiveEntry, replica_dicts
from console.views import reassignment_rows as views
from tests.conftest import make_personas

pytestmark = pytest.mark.django_db

# The rows as templates/console/_reassign_progress.html rendered them before the string building.
REFERENCE = engines["django"].from_string(
    """    {% for x in rows %}
      <tr><td class="mono">{{ x.topic }}-{{ x.partition }}</td>
        <td class="mono">{{ x.original|join:"," }} → {{ x.target|join:"," }}</td>
        <td class="state-{{ x.state }}">{{ x.get_state_display }}{% if x.message %} <span class="muted">{{ x.message }}</span>{% endif %}</td>
        <td><div class="bar"><span style="width: {{ x.bar }}%"></span></div> {{ x.bar }}%</td>
        <td>{% for rep in x.replicas %}<div{% if "~" in rep.status %} title="{{ estimates }}"{% endif %}>broker {{ rep.broker }}: {{ rep.status }}</div>{% endfor %}</td></tr>
    {% endfor %}
"""
)


def reference_rows(r: Reassignment) -> str:
    """The former ``_rows_with_live`` + the template loop: what the page showed before."""
    r = Reassignment.objects.get(pk=r.pk)
    rows = list(r.partitions.all()[: views.SHOWN_ROWS])
    for x in rows:
        entry = store.live_entry(r, x.topic, x.partition) if x.state == "moving" else None
        x.bar = x.percent
        if entry:
            x.replicas = replica_dicts(entry.replicas)
            x.bar = max(x.percent, entry.percent)
    return REFERENCE.render({"rows": rows, "estimates": progress.ESTIMATE_NOTE})


@pytest.fixture
def people(offline_cluster):
    return make_personas(offline_cluster)


@pytest.fixture
def moving(offline_cluster, people):
    """A reassignment in its move: two moving partitions, one done, one diverged with a message."""
    op = Operation.objects.create(
        kind="reassignment",
        cluster=offline_cluster,
        state=OperationState.RUNNING,
        created_by=people["operator"],
        heartbeat_at=timezone.now(),
    )
    r = Reassignment.objects.create(
        operation=op,
        cluster=offline_cluster,
        stage="moving",
        throttle_bytes_per_s=1024 * 1024,
        partitions_total=4,
        bytes_total=400,
        bytes_done=100,
        last_poll_at=timezone.now(),
    )
    rows = [
        ("orders", 0, "moving", [1, 2], [1, 3], [], ""),
        ("orders", 1, "moving", [2, 3], [2, 4], [], ""),
        (
            "orders",
            2,
            "done",
            [3, 1],
            [3, 2],
            [{"broker": 2, "status": "In sync", "bytes": 9, "new": True}],
            "",
        ),
        ("pay<&>", 0, "diverged", [1], [2], [{"broker": "<b>", "status": "~<i>"}], 'replicas "<x>" & more'),
    ]
    for topic, p, state, o, t, reps, msg in rows:
        ReassignmentPartition.objects.create(
            reassignment=r, topic=topic, partition=p, original=o, target=t, state=state,
            bytes_total=100, bytes_done=40, replicas=reps, message=msg,
        )  # fmt: skip
    poll(r, "Behind: ~1,200 messages / 60 B", 40)
    return r


def poll(r: Reassignment, status: str, done: int) -> None:
    """What a poll cycle writes: every moving partition's live entry, with a new last_poll_at."""
    entries = {
        ("orders", 0): LiveEntry(
            100, done, [[3, status, done, True], [1, progress.IN_SYNC, 100, False]], done
        ),
        ("orders", 1): LiveEntry(100, 10, [[4, "Behind: <60 B>", 10, True]], 10),
    }
    store.write_live(r, entries, time.time(), last_poll_at=timezone.now())


def fragment(client, r: Reassignment) -> str:
    url = reverse("reassign_progress", kwargs={"name": r.cluster.name, "rid": r.pk})
    response = client.get(url, headers={"HX-Request": "true"})
    assert response.status_code == 200
    return response.content.decode()


def tbody(html: str) -> str:
    return html[html.index("<tbody>") : html.index("</tbody>")]


def test_the_rows_read_exactly_as_the_templates_loop_wrote_them(client, people, moving):
    client.force_login(people["operator"])
    html = fragment(client, moving)
    expected = reference_rows(moving)
    assert expected.strip() and expected in html
    assert "&lt;b&gt;" in html and "<b>" not in html and "pay&lt;&amp;&gt;-0" in html
    # and as the template's loop wrote them without any live entry (the rows' own replicas)
    Reassignment.objects.filter(pk=moving.pk).update(live={})
    assert reference_rows(moving) in fragment(client, moving)


def test_a_new_poll_shows_at_once_not_a_cached_render_of_the_last(client, people, moving):
    client.force_login(people["operator"])
    first = fragment(client, moving)
    assert "Behind: ~1,200 messages / 60 B" in first and "40%" in first
    assert tbody(fragment(client, moving)) == tbody(first)  # nothing changed: the same rows
    poll(moving, "Behind: ~300 messages / 15 B", 85)
    second = fragment(client, moving)
    assert "Behind: ~300 messages / 15 B" in second and "85%" in second
    assert "Behind: ~1,200 messages" not in second
    assert reference_rows(moving) in second
    # a state change without a poll (e.g. a cancel settling rows) shows at once too
    ReassignmentPartition.objects.filter(reassignment=moving, partition=1).update(
        state="cancelled", message="back to [2, 3]"
    )
    third = fragment(client, moving)
    assert "back to [2, 3]" in third and reference_rows(moving) in third


def test_a_viewer_who_may_not_cancel_never_gets_the_controls_from_a_cached_render(
    client, people, moving, monkeypatch
):
    renders = []
    real = views.render_rows
    monkeypatch.setattr(views, "render_rows", lambda *a: renders.append(1) or real(*a))
    client.force_login(people["operator"])
    poll(moving, "Behind: ~7 messages / 1 B", 99)  # rows no earlier test has cached
    operator = fragment(client, moving)
    assert "Cancel reassignment" in operator and "Change throttle" in operator
    # the forms carry the CSRF token although the fragment is rendered without the context processors
    assert operator.count('name="csrfmiddlewaretoken" value="') == 2
    assert 'name="csrfmiddlewaretoken" value=""' not in operator
    for name in ("viewer", "auditor"):
        client.force_login(people[name])
        theirs = fragment(client, moving)
        assert "Behind: ~7 messages / 1 B" in theirs
        assert "Cancel reassignment" not in theirs and "throttle-form" not in theirs
        assert "reassign_cancel" not in theirs and "/cancel/" not in theirs
    assert renders == [1]  # the viewers got the operator's cached rows, and only the rows
    client.force_login(people["operator"])
    assert "Cancel reassignment" in fragment(client, moving)
