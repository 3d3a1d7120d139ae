"""The fleet home: every cluster a user may see, from each cluster's summary row, with its running
operations and held changes; sorted and filtered; the landing page's choice; the API and the command
line answer the page's rows. (The summary rows themselves: test_fleet_summary.)"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from console.fleet import home
from console.models import ChangeRequest, Cluster, ClusterSummary, Operation, Role, RoleBinding
from tests.unit.alert_world import make_alert

pytestmark = pytest.mark.django_db

TAKEN = timezone.now().replace(microsecond=0) - timedelta(minutes=3)


def _cluster(name: str, description: str = "", **summary) -> Cluster:
    cluster = Cluster.objects.create(name=name, description=description, bootstrap_servers="127.0.0.1:1")
    if summary:
        values = {"taken_at": TAKEN, "reachable": True, "brokers_up": 3, "brokers_total": 3, **summary}
        ClusterSummary.objects.create(cluster=cluster, **values)
    return cluster


@pytest.fixture
def estate():
    """Four clusters: healthy, unhealthy, unreachable (last figures kept), never snapshotted."""
    return {
        "east": _cluster(
            "east", "payments, region east", kafka_version="4.1", metadata_version="4.1-IV1",
            controller_id=101, topics=10, partitions=120, consumer_groups=4,
        ),
        "west": _cluster(
            "west", "region west", kafka_version="3.9", metadata_version="3.9-IV0", controller_id=102,
            brokers_up=2, topics=5, partitions=60, under_replicated=7, offline=1, under_min_isr=8,
        ),
        "lab": _cluster(
            "lab", "test bench", reachable=False, error="Kafka could not be reached", topics=2, partitions=3,
        ),
        "new": _cluster("new", "just registered"),
    }  # fmt: skip


@pytest.fixture
def people(estate):
    users = get_user_model().objects
    out = {
        "root": users.create_superuser(username="root", password="pw-root"),
        "eve": users.create_user(username="eve", password="pw-eve"),  # operator of east and west
        "rita": users.create_user(username="rita", password="pw-rita"),  # requester on east only
    }
    for name in ("east", "west"):
        RoleBinding.objects.create(cluster=estate[name], user=out["eve"], role=Role.OPERATOR)
    RoleBinding.objects.create(cluster=estate["east"], user=out["rita"], role=Role.REQUESTER)
    return out


def _held(cluster, user, state="pending", gated=False) -> ChangeRequest:
    return ChangeRequest.objects.create(
        cluster=cluster, kind="topic.create", resource="t", state=state, requested_by=user,
        requested_by_name=user.username, gated=gated,
    )  # fmt: skip


def _names(rows) -> list[str]:
    return [r.name for r in rows]


def test_it_lists_every_cluster_with_its_summary_and_state(estate, people):
    rows = {r.name: r for r in home.fleet(people["root"])}
    assert list(rows) == ["east", "lab", "new", "west"]
    assert rows["east"] == home.FleetRow(
        name="east", description="payments, region east", controller_mode=False, state="healthy",
        taken_at=TAKEN, reachable=True, error="", kafka_version="4.1", metadata_version="4.1-IV1",
        controller_id=101, brokers_up=3, brokers_total=3, topics=10, partitions=120, under_replicated=0,
        offline=0, under_min_isr=0, consumer_groups=4, running_operations=0, held_changes=0, open_alerts=0,
        alert_severity="",
    )  # fmt: skip
    assert (rows["west"].state, rows["west"].brokers_up, rows["west"].under_min_isr) == ("unhealthy", 2, 8)
    assert (rows["lab"].state, rows["lab"].error, rows["lab"].partitions) == (
        "unreachable",
        "Kafka could not be reached",
        3,  # the last figures, kept
    )
    assert rows["new"] == home.FleetRow(
        name="new", description="just registered", controller_mode=False, state="never", taken_at=None,
        reachable=None, error="", kafka_version="", metadata_version="", controller_id=None, brokers_up=None,
        brokers_total=None, topics=None, partitions=None, under_replicated=None, offline=None,
        under_min_isr=None, consumer_groups=None, running_operations=0, held_changes=0, open_alerts=0,
        alert_severity="",
    )  # fmt: skip


def test_it_shows_a_user_only_the_clusters_bound_to_them(people):
    assert _names(home.fleet(people["eve"])) == ["east", "west"]
    assert _names(home.fleet(people["rita"])) == ["east"]
    stranger = get_user_model().objects.create_user(username="stranger", password="pw")
    assert home.fleet(stranger) == []


def test_it_sorts_by_any_column_with_missing_figures_last(people):
    root = people["root"]
    assert _names(home.fleet(root, sort="partitions")) == ["lab", "west", "east", "new"]
    assert _names(home.fleet(root, sort="partitions", descending=True)) == ["east", "west", "lab", "new"]
    assert _names(home.fleet(root, sort="state")) == ["lab", "west", "new", "east"]
    assert _names(home.fleet(root, sort="kafka_version")) == ["west", "east", "lab", "new"]
    assert _names(home.fleet(root, sort="taken_at")) == ["east", "lab", "west", "new"]
    for key in home.SORTS:  # every column sorts, none fails on a cluster without figures
        assert sorted(_names(home.fleet(root, sort=key))) == ["east", "lab", "new", "west"]


def test_it_filters_by_text_and_by_state(people):
    root = people["root"]
    assert _names(home.fleet(root, text="REGION")) == ["east", "west"]
    assert _names(home.fleet(root, text="bench")) == ["lab"]
    assert _names(home.fleet(root, state="unhealthy")) == ["west"]
    assert _names(home.fleet(root, state="unreachable")) == ["lab"]
    assert _names(home.fleet(root, state="never")) == ["new"]
    assert _names(home.fleet(root, state="healthy", text="east")) == ["east"]


def test_it_counts_running_operations_and_held_changes_as_the_review_queue_scopes_them(estate, people):
    east, west = estate["east"], estate["west"]
    for state in ("pending", "running", "running", "succeeded", "errored"):
        Operation.objects.create(kind="topic.create", cluster=east, state=state)
    Operation.objects.create(kind="reassignment", cluster=west, state="running")
    _held(east, people["rita"])
    _held(east, people["eve"], gated=True)
    _held(east, people["eve"], state="approved")
    _held(west, people["eve"], gated=True)

    def counts(user):
        return {r.name: (r.running_operations, r.held_changes) for r in home.fleet(user)}

    assert counts(people["eve"]) == {"east": (3, 2), "west": (1, 1)}  # an approver sees every request
    assert counts(people["rita"]) == {"east": (3, 1)}  # a requester: their own


def test_it_reads_the_fleet_in_a_fixed_number_of_queries(people, django_assert_max_num_queries):
    for i in range(40):
        cluster = _cluster(f"c{i:02d}", topics=i, partitions=i)
        Operation.objects.create(kind="topic.create", cluster=cluster, state="running")
        RoleBinding.objects.create(cluster=cluster, user=people["eve"], role=Role.OPERATOR)
        make_alert(cluster, "group_lag", "g", severity="critical" if i % 2 else "warning")
    with django_assert_max_num_queries(2):
        rows = home.fleet(people["eve"], sort="partitions")
    assert len(rows) == 42 and {r.running_operations for r in rows[:40]} == {1}
    assert [(r.open_alerts, r.alert_severity) for r in rows[:3]] == [
        (1, "warning"),
        (1, "critical"),
        (1, "warning"),
    ]


def test_it_counts_open_alerts_with_their_worst_severity_and_sorts_by_them(estate, people):
    make_alert(estate["west"], "group_lag", "g1")
    make_alert(estate["west"], "group_lag", "g2", state="acknowledged")
    make_alert(estate["west"], "under_replicated", state="resolved")
    make_alert(estate["lab"], "cluster_unreachable", severity="critical")
    make_alert(estate["new"], "broker_down", "broker 1", state="resolved")
    rows = {r.name: (r.open_alerts, r.alert_severity) for r in home.fleet(people["root"])}
    assert rows == {"east": (0, ""), "lab": (1, "critical"), "new": (0, ""), "west": (2, "warning")}
    assert _names(home.fleet(people["root"], sort="open_alerts", descending=True)) == [
        "lab",
        "west",
        "east",
        "new",
    ]
    assert _names(home.fleet(people["root"], sort="open_alerts")) == ["east", "new", "west", "lab"]
    assert {r.name: r.open_alerts for r in home.fleet(people["eve"])} == {"east": 0, "west": 2}


def test_the_page_links_a_clusters_open_alerts_to_its_alerts_page(client, estate, people):
    make_alert(estate["lab"], "cluster_unreachable", severity="critical")
    make_alert(estate["west"], "group_lag", "g1")
    client.force_login(people["root"])
    body = client.get(reverse("fleet_home"), {"sort": "open_alerts", "desc": "1"}).content.decode()
    cells = re.findall(r'<td class="open-alerts">(.*?)</td>', body)
    assert cells == [
        '<a class="error" href="/c/lab/alerts/">1</a>',
        '<a class="warn" href="/c/west/alerts/">1</a>',
        "0",
        "0",
    ]
    out = StringIO()
    call_command("kafka", "fleet", "--sort", "open_alerts", "--desc", stdout=out)
    lines = out.getvalue().splitlines()
    assert "OPEN_ALERTS" in lines[0]
    assert [line.split()[0] for line in lines[1:]] == ["lab", "west", "east", "new"]
    assert re.search(r"\s1 critical\s", lines[1]) and re.search(r"\s1 warning\s", lines[2])


def test_the_landing_page_chooses_the_overview_the_fleet_or_the_list(client, estate, people):
    client.force_login(people["rita"])  # one cluster
    assert client.get("/").url == reverse("cluster_overview", kwargs={"name": "east"})
    client.force_login(people["eve"])  # two
    assert client.get("/").url == reverse("fleet_home")
    client.force_login(get_user_model().objects.create_user(username="nobody", password="pw"))
    assert client.get("/").url == reverse("cluster_list")


def test_the_page_shows_each_row_with_its_age_and_a_link_to_the_overview(client, people):
    client.force_login(people["root"])
    response = client.get(reverse("fleet_home"), {"sort": "state"})
    body = response.content.decode()
    assert response.status_code == 200
    assert [r.name for r in response.context["fleet"]] == ["lab", "west", "new", "east"]
    assert 'href="/c/east/"' in body and 'href="/c/lab/"' in body
    ages = re.findall(
        r'<td class="as-of">as&nbsp;of&nbsp;\d+&nbsp;min(&nbsp;\d+&nbsp;s)?&nbsp;ago</td>', body
    )
    assert len(ages) == 3  # 3 min old, or a little more
    assert '<td class="as-of">never&nbsp;snapshotted</td>' in body
    headers = {h["key"]: h["href"] for h in response.context["headers"]}
    assert headers["state"] == "?sort=state&desc=1" and headers["partitions"] == "?sort=partitions"
    filtered = client.get(reverse("fleet_home"), {"q": "region", "state": "unhealthy"})
    assert [r.name for r in filtered.context["fleet"]] == ["west"]


def _page_rows(client, **params) -> list[dict]:
    rows = client.get(reverse("fleet_home"), params).context["fleet"]
    return [{**vars_of(r), "taken_at": r.taken_at.isoformat() if r.taken_at else None} for r in rows]


def vars_of(row) -> dict:
    return {f: getattr(row, f) for f in home.FleetRow.__dataclass_fields__}


def test_the_api_and_the_command_line_answer_the_pages_rows(client, people):
    client.force_login(people["eve"])
    page = _page_rows(client, sort="partitions", desc="1")
    api = client.get(reverse("api:fleet"), {"sort": "partitions", "desc": "true"})
    assert api.status_code == 200
    assert api.json()["results"] == page and api.json()["count"] == 2
    out = StringIO()
    call_command(
        "kafka", "fleet", "--as", "eve", "--sort", "partitions", "--desc", "--output", "json", stdout=out
    )
    assert json.loads(out.getvalue())["items"] == page
    assert client.get(reverse("api:fleet"), {"state": "sideways"}).status_code == 400


def test_the_command_line_reads_every_cluster_without_as(people):
    out = StringIO()
    call_command("kafka", "fleet", "--state", "unreachable", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:3] == ["NAME", "STATE", "KAFKA_VERSION"]
    assert [line.split()[:2] for line in lines[1:]] == [["lab", "unreachable"]]
