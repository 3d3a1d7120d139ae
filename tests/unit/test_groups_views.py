"""Consumer group pages through the test client, against the sandbox: list, detail (and its live
fragment), the reset form (dry run, refusals, execute), deletes, the topic page's section."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.models import AuditEvent
from tests.unit.group_world import committed, log_topic, uniq

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


@pytest.fixture(autouse=True)
def _own_lake(tmp_path, monkeypatch):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))


def topic(sandbox, partitions: int = 2, start: int = 0, end: int = 100) -> str:
    return log_topic(sandbox, uniq("vt"), partitions, start, end)


def group(sandbox, offsets: dict, members: dict | None = None, gid: str = "") -> str:
    gid = gid or uniq("vg")
    sandbox.add_group(gid, members=members, offsets=offsets)
    return gid


def url(route: str, cluster, **kwargs) -> str:
    return reverse(route, kwargs={"name": cluster.name, **kwargs})


def test_the_list_shows_groups_with_lag_and_links(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 70, (t, 1): 100}, members={"svc-a": [(t, 0)]})
    client.force_login(personas["viewer"])
    response = client.get(url("group_list", kafka_cluster), {"q": gid})
    body = response.content.decode()
    assert response.status_code == 200
    assert f'data-group="{gid}"' in body and url("group_detail", kafka_cluster, group=gid) in body
    assert '<td class="lag lag-ok">30</td>' in body
    fragment = client.get(
        url("group_list", kafka_cluster), {"q": gid, "lagging": "1"}, HTTP_HX_REQUEST="true"
    )
    assert fragment.content.decode().startswith('<div id="group-table">') and gid in fragment.content.decode()
    assert fragment["Vary"] == "HX-Request" or "HX-Request" in fragment["Vary"]


def test_a_group_id_with_a_slash_has_a_page(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 5}, gid=f"team/{uniq('app')}?x#y")
    client.force_login(personas["viewer"])
    listed = client.get(url("group_list", kafka_cluster), {"q": gid})
    assert listed.status_code == 200
    page = client.get(url("group_detail", kafka_cluster, group=gid))
    assert page.status_code == 200 and f"{t}-0" in page.content.decode()


def test_the_detail_page_polls_a_live_fragment(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 60}, members={"svc-b": [(t, 0), (t, 1)]})
    client.force_login(personas["viewer"])
    page = client.get(url("group_detail", kafka_cluster, group=gid)).content.decode()
    assert 'hx-trigger="every 5s"' in page and "svc-b" in page and "Lag over the last 24 h" in page
    assert "Reset offsets…" not in page  # a viewer cannot manage groups
    with sandbox.state.lock:
        sandbox.state.groups[gid].offsets[(t, 0)] = 90
    live = client.get(url("group_detail", kafka_cluster, group=gid), HTTP_HX_REQUEST="true").content.decode()
    assert live.startswith('<div id="group-live"') and "Lag over" not in live
    assert '<td class="lag lag-ok">10</td>' in live


def test_an_unknown_group_is_a_404_page_that_says_so(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    response = client.get(url("group_detail", kafka_cluster, group="no-such-group-here"))
    assert response.status_code == 404 and b"No such consumer group" in response.content


def _reset_body(**extra) -> dict:
    return {"mode": "to-earliest", "scope": "all-topics", "action": "dry_run", **extra}


def test_the_dry_run_shows_the_plan_and_changes_nothing(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox, start=20)
    gid = group(sandbox, {(t, 0): 70, (t, 1): 100})
    client.force_login(personas["operator"])
    response = client.post(
        url("group_reset", kafka_cluster, group=gid), _reset_body(mode="shift-by", shift="-60")
    )
    body = response.content.decode()
    assert response.status_code == 200 and 'id="reset-plan"' in body
    assert f'data-tp="{t}-0"' in body and '<td class="new changed">20</td>' in body
    assert '<td class="new changed">40</td>' in body and "Execute reset" in body
    assert "70 is before" not in body and "10 is before the log start" in body
    assert committed(sandbox, gid) == {(t, 0): 70, (t, 1): 100}
    assert not AuditEvent.objects.filter(action__startswith="group.").exists()


def test_bad_reset_input_is_a_form_error_not_a_500(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 70})
    client.force_login(personas["operator"])
    for body, says in [
        (_reset_body(mode="to-datetime"), "Give the time"),
        (_reset_body(mode="to-datetime", timestamp="soon"), "is not a time"),
        (_reset_body(mode="to-offset"), "Give the offset"),
        (_reset_body(scope="partitions", topic=t, partitions="1-x"), "is not a partition number"),
        (_reset_body(scope="topic"), "Name the topic"),
        (_reset_body(scope="topic", topic="missing-topic"), "does not exist"),
        (_reset_body(mode="from-file", file_text="a,b,c"), "whole numbers"),
        (_reset_body(mode="sideways"), "Select a valid choice"),
    ]:
        response = client.post(url("group_reset", kafka_cluster, group=gid), body)
        assert response.status_code == 200 and says in response.content.decode(), (body, says)
    assert committed(sandbox, gid) == {(t, 0): 70}


def test_execute_needs_the_group_id_and_an_empty_group(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    busy = group(sandbox, {(t, 0): 70}, members={"still-running": [(t, 0)]})
    client.force_login(personas["operator"])
    refused = client.post(
        url("group_reset", kafka_cluster, group=busy), _reset_body(action="execute", confirmation=busy)
    )
    assert refused.status_code == 200 and "still-running (/127.0.0.1)" in refused.content.decode()
    idle = group(sandbox, {(t, 0): 70})
    unconfirmed = client.post(url("group_reset", kafka_cluster, group=idle), _reset_body(action="execute"))
    assert f"Type the group id (&#x27;{idle}&#x27;)" in unconfirmed.content.decode()
    assert committed(sandbox, busy) == {(t, 0): 70} and committed(sandbox, idle) == {(t, 0): 70}
    assert [e.outcome for e in AuditEvent.objects.filter(action="group.offsets.reset")] == [
        "refused",
        "refused",
    ]


def test_execute_resets_and_goes_back_to_the_group(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox, start=5)
    gid = group(sandbox, {(t, 0): 70, (t, 1): 100})
    client.force_login(personas["operator"])
    response = client.post(
        url("group_reset", kafka_cluster, group=gid),
        _reset_body(action="execute", confirmation=gid, scope="partitions", topic=t, partitions="1"),
    )
    assert response.status_code == 302 and response["Location"] == url(
        "group_detail", kafka_cluster, group=gid
    )
    assert committed(sandbox, gid) == {(t, 0): 70, (t, 1): 5}
    htmx = client.post(
        url("group_reset", kafka_cluster, group=gid),
        _reset_body(action="execute", confirmation=gid, mode="from-file", file_text=f"{t},0,50\n"),
        HTTP_HX_REQUEST="true",
    )
    assert htmx.status_code == 200 and htmx["HX-Redirect"] == url("group_detail", kafka_cluster, group=gid)
    assert committed(sandbox, gid) == {(t, 0): 50, (t, 1): 5}
    outcome = AuditEvent.objects.filter(action="group.offsets.reset", outcome="success").latest("id")
    assert outcome.before == {f"{t}-0": 70} and outcome.after == {f"{t}-0": 50}


def test_a_viewer_cannot_open_the_reset_or_delete_pages(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 70})
    client.force_login(personas["viewer"])
    for route in ("group_reset", "group_delete", "group_offsets_delete"):
        assert client.get(url(route, kafka_cluster, group=gid)).status_code == 403
        assert client.post(url(route, kafka_cluster, group=gid), {"confirmation": gid}).status_code == 403
    assert gid in sandbox.state.groups and committed(sandbox, gid) == {(t, 0): 70}


def test_deleting_a_group_from_its_page(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    busy = group(sandbox, {(t, 0): 1}, members={"worker-7": [(t, 0)]})
    client.force_login(personas["operator"])
    page = client.get(url("group_delete", kafka_cluster, group=busy)).content.decode()
    assert "worker-7" in page and 'id="delete-blocked"' in page
    refused = client.post(url("group_delete", kafka_cluster, group=busy), {"confirmation": busy})
    assert (
        refused.status_code == 200 and "worker-7" in refused.content.decode() and busy in sandbox.state.groups
    )
    idle = group(sandbox, {(t, 0): 1})
    wrong = client.post(url("group_delete", kafka_cluster, group=idle), {"confirmation": "nope"})
    assert "Type the group id" in wrong.content.decode() and idle in sandbox.state.groups
    done = client.post(url("group_delete", kafka_cluster, group=idle), {"confirmation": idle})
    assert done.status_code == 302 and done["Location"] == url("group_list", kafka_cluster)
    assert idle not in sandbox.state.groups
    assert client.get(url("group_delete", kafka_cluster, group=idle)).status_code == 404


def test_deleting_offsets_of_a_topic_the_group_has_none_for_says_so(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 1})
    client.force_login(personas["operator"])
    form = client.get(url("group_offsets_delete", kafka_cluster, group=gid), {"topic": t}).content.decode()
    assert f'value="{t}"' in form
    response = client.post(
        url("group_offsets_delete", kafka_cluster, group=gid), {"topic": "other", "confirmation": gid}
    )
    assert response.status_code == 200 and "no committed offsets for topic" in response.content.decode()
    assert committed(sandbox, gid) == {(t, 0): 1}


def test_the_topic_page_loads_its_consuming_groups(client, personas, kafka_cluster, sandbox):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    client.force_login(personas["viewer"])
    page = client.get(
        reverse("topic_detail", kwargs={"name": kafka_cluster.name, "topic": t})
    ).content.decode()
    assert url("group_topic_consumers", kafka_cluster, topic=t) in page and 'hx-trigger="load"' in page
    section = client.get(url("group_topic_consumers", kafka_cluster, topic=t)).content.decode()
    assert f'data-group="{gid}"' in section and '<td class="lag lag-ok">60</td>' in section


def test_the_topic_section_says_why_when_groups_cannot_be_read(client, personas, offline_cluster):
    from console.models import Role, RoleBinding

    RoleBinding.objects.create(cluster=offline_cluster, user=personas["viewer"], role=Role.VIEWER)
    client.force_login(personas["viewer"])
    response = client.get(url("group_topic_consumers", offline_cluster, topic="x"))
    assert response.status_code == 200 and b"could not be read" in response.content


def test_groups_are_offered_on_broker_connections_only(client, personas, kafka_cluster, sandbox):
    from console.models import Cluster
    from tests.unit.matrix_world import bind

    ctl = Cluster.objects.create(name="ctl-groups", bootstrap_controllers=sandbox.bootstrap_controllers)
    bind(ctl, {**personas, "clusteradmin": personas["admin"]}, with_admin=False)
    client.force_login(personas["viewer"])
    response = client.get(url("group_list", ctl))
    assert response.status_code == 200 and b"UNSUPPORTED_ENDPOINT_TYPE" in response.content
    nav = client.get(url("cluster_overview", ctl)).content.decode()
    assert url("group_list", ctl) not in nav
    assert (
        url("group_list", kafka_cluster)
        in client.get(url("cluster_overview", kafka_cluster)).content.decode()
    )


def test_the_lag_trend_comes_from_the_telemetry_snapshots(client, personas, kafka_cluster, sandbox, tmp_path):
    from datetime import timedelta

    import pyarrow as pa
    from django.utils import timezone

    from console.groups import trend
    from pipeline import lake

    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 10})
    root = tmp_path / "lake"
    now = timezone.now()
    for minutes, lags in ((90, (30, 5)), (30, (50, 7))):
        ts = (now - timedelta(minutes=minutes)).replace(microsecond=0)
        rows = [(gid, t, p, 10, 10 + lag, lag) for p, lag in enumerate(lags)] + [("other", t, 0, 1, 2, 1)]
        cols = list(zip(*rows, strict=True))
        names = ["group", "topic", "partition", "committed_offset", "log_end_offset", "lag"]
        table = pa.table(
            {
                "schema_version": [lake.SCHEMA_VERSION] * len(rows),
                "ts": [ts] * len(rows),
                **dict(zip(names, cols, strict=True)),
            }
        )
        lake.write_snapshot(root, kafka_cluster.name, ts, {"groups": table}, 300)
    trend.clear_cache()
    got = trend.lag_trend(kafka_cluster.name, gid)
    assert [v for _, v in got.points] == [35, 57] and got.snapshots == 2
    client.force_login(personas["viewer"])
    page = client.get(url("group_detail", kafka_cluster, group=gid)).content.decode()
    assert 'aria-label="total lag over time"' in page and "total lag: 57 msgs" in page
