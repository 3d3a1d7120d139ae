"""Search across clusters: topics, groups and principals found by name in every visible cluster, from
the telemetry snapshots and the clusters' summaries (no read of Kafka), grouped by cluster."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.urls import reverse

from console import patterns
from console.fleet import search as fleet_search
from console.models import Cluster, ClusterSummary, Role, RoleBinding
from console.telemetry import names as snapshot_names
from console.topics import cache as metadata_cache
from console.views.search import linker
from tests.unit.fleet_search_world import INTERVAL_S, NOW, B

pytestmark = pytest.mark.django_db


def found(result) -> dict:
    """{cluster: {kind: ([names], more)}} (a principal as "name=acls"); a missing kind as its reason."""
    out = {}
    for c in result.clusters:
        out[c.cluster] = {
            f.kind: f.missing
            or ([h.name if h.acls is None else f"{h.name}={h.acls}" for h in f.hits], f.more)
            for f in c.kinds
        }
    return out


def test_it_finds_topics_groups_and_principals_by_substring_in_every_cluster(search_world, personas):
    m = search_world.marker
    result = fleet_search.search(personas["admin"], m.upper())  # a substring ignores case
    assert found(result) == {
        B: {
            "topic": ([f"{m}-audit", f"{m}-orders-eu"], 0),
            "group": ([f"{m}-billing-eu"], 0),
            "principal": ([f"User:{m}-carol=1"], 0),
        },
        "sandbox": {
            "topic": ([f"{m}-orders", f"{m}-payments"], 0),
            "group": ([f"{m}-billing"], 0),
            "principal": ([f"User:{m}-alice=3"], 0),
        },
    }
    assert result.searched == 2 and result.not_searched == ()
    for c in result.clusters:
        assert [(f.as_of, f.source) for f in c.kinds] == [
            (NOW, "snapshot"),
            (NOW, "snapshot"),
            (NOW, "summary"),
        ]


def test_it_finds_names_by_regex(search_world, personas):
    m = search_world.marker
    result = fleet_search.search(personas["admin"], f"^{m}-(orders|billing)(-eu)?$", regex=True)
    assert found(result) == {
        B: {"topic": ([f"{m}-orders-eu"], 0), "group": ([f"{m}-billing-eu"], 0), "principal": ([], 0)},
        "sandbox": {"topic": ([f"{m}-orders"], 0), "group": ([f"{m}-billing"], 0), "principal": ([], 0)},
    }
    kinds = fleet_search.search(personas["admin"], f"{m}-[ac]", regex=True, kinds=["principal", "topic"])
    assert kinds.kinds == ("topic", "principal")
    assert found(kinds) == {
        B: {"topic": ([f"{m}-audit"], 0), "principal": ([f"User:{m}-carol=1"], 0)},
        "sandbox": {"topic": ([], 0), "principal": ([f"User:{m}-alice=3"], 0)},
    }


def test_a_user_bound_to_one_cluster_never_sees_the_others_names(search_world, personas):
    m = search_world.marker
    for role in ("viewer", "operator"):
        result = fleet_search.search(personas[role], m)
        assert [c.cluster for c in result.clusters] == ["sandbox"] and result.searched == 1
    # principals only where the user may open the ACL page (acl.manage): the operator, not the viewer
    assert found(fleet_search.search(personas["viewer"], m)) == {
        "sandbox": {"topic": ([f"{m}-orders", f"{m}-payments"], 0), "group": ([f"{m}-billing"], 0)}
    }
    assert found(fleet_search.search(personas["operator"], "alice"))["sandbox"]["principal"] == (
        [f"User:{m}-alice=3"],
        0,
    )
    assert fleet_search.search(personas["outsider"], m).clusters == ()


def test_a_bad_regex_is_a_pattern_error(search_world, personas):
    with pytest.raises(patterns.PatternError, match="missing"):
        fleet_search.search(personas["admin"], "orders(", regex=True)
    with pytest.raises(patterns.PatternError):
        fleet_search.search(personas["admin"], "(?=x)y", regex=True)  # lookahead: RE2 refuses it


def test_an_empty_query_finds_nothing(search_world, personas):
    result = fleet_search.search(personas["admin"], "")
    assert (result.clusters, result.searched, result.total) == ((), 0, 0)


def test_each_cluster_and_kind_shows_at_most_the_cap_and_counts_the_rest(search_world, personas, settings):
    settings.FLEET_SEARCH_CAP = 1
    m = search_world.marker
    result = fleet_search.search(personas["admin"], f"{m}-", kinds=["topic"])
    assert found(result) == {
        B: {"topic": ([f"{m}-audit"], 1)},
        "sandbox": {"topic": ([f"{m}-orders"], 1)},
    }
    assert result.total == 4


def test_clusters_without_a_snapshot_are_listed_as_such(search_world, personas, offline_cluster):
    result = fleet_search.search(personas["admin"], search_world.marker)
    assert found(result)["offline"] == {
        "topic": "no snapshot yet",
        "group": "no snapshot yet",
        "principal": "no snapshot yet",
    }
    ClusterSummary.objects.filter(cluster=search_world.b).delete()
    assert found(fleet_search.search(personas["admin"], "carol"))[B] == {
        "topic": ([], 0),
        "group": ([], 0),
        "principal": "no snapshot yet",
    }


def test_a_newer_snapshot_file_replaces_the_cached_names(search_world, personas):
    m = search_world.marker
    assert found(fleet_search.search(personas["admin"], f"{m}-late", kinds=["topic"])) == {}
    search_world.sandbox_a.create_topic(search_world.name("late"))
    # the file read before is kept while it is the newest: the new topic is not there yet
    assert found(fleet_search.search(personas["admin"], f"{m}-late", kinds=["topic"])) == {}
    later = NOW + timedelta(seconds=INTERVAL_S)
    search_world.snapshot(search_world.a, later)
    result = fleet_search.search(personas["admin"], f"{m}-late", kinds=["topic"])
    assert found(result) == {"sandbox": {"topic": ([f"{m}-late"], 0)}}
    assert result.clusters[0].kinds[0].as_of == later


def test_the_names_kept_are_bounded(search_world, personas, settings):
    settings.FLEET_SEARCH_CACHED_FILES = 3
    fleet_search.search(personas["admin"], search_world.marker)  # 2 clusters x (topics, groups)
    assert snapshot_names.cached_count() == 3


def test_a_newer_metadata_snapshot_of_the_console_is_used_but_never_read(search_world, personas):
    m = search_world.marker
    search_world.sandbox_a.create_topic(search_world.name("fresh"))
    fleet_search.search(personas["admin"], m)
    assert metadata_cache.peek(search_world.a) is None  # the search read nothing from Kafka
    metadata_cache.get_snapshot(search_world.a)  # a topic page's read
    result = fleet_search.search(personas["admin"], f"{m}-fresh", kinds=["topic"])
    assert found(result) == {"sandbox": {"topic": ([f"{m}-fresh"], 0)}}
    assert result.clusters[0].kinds[0].source == "metadata"
    assert result.clusters[0].kinds[0].as_of > NOW


def test_clusters_past_the_time_budget_are_named_not_searched(search_world, personas, settings):
    settings.FLEET_SEARCH_BUDGET_S = 0
    result = fleet_search.search(personas["admin"], search_world.marker)
    assert (result.searched, result.not_searched) == (1, ("sandbox",))
    assert [c.cluster for c in result.clusters] == [B]


# -- the page ---------------------------------------------------------------------------------------


def test_the_page_links_each_name_to_its_page_as_of_the_snapshot(client, search_world, personas):
    m = search_world.marker
    client.force_login(personas["admin"])
    html = client.get(reverse("search"), {"q": m}).content.decode()
    for cluster in ("sandbox", B):
        assert f'id="cluster-{cluster}"' in html
    assert reverse("topic_detail", kwargs={"name": B, "topic": f"{m}-orders-eu"}) in html
    assert reverse("group_detail", kwargs={"name": "sandbox", "group": f"{m}-billing"}) in html
    acl_link = reverse("acl_list", kwargs={"name": "sandbox"}) + f"?principal=User%3A{m}-alice"
    assert acl_link in html
    assert "as of 2026-05-04 12:07" in html


def test_the_page_shows_a_viewer_only_their_cluster(client, search_world, personas):
    m = search_world.marker
    client.force_login(personas["viewer"])
    html = client.get(reverse("search"), {"q": m}).content.decode()
    assert f"{m}-orders" in html and f"{m}-payments" in html
    assert B not in html and "orders-eu" not in html and "alice" not in html


def test_a_bad_regex_is_a_form_error_on_the_page(client, search_world, personas):
    client.force_login(personas["admin"])
    response = client.get(reverse("search"), {"q": "orders(", "regex": "on"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "missing )" in html and 'class="search-results"' not in html


def test_an_empty_query_shows_the_form_only(client, search_world, personas):
    client.force_login(personas["admin"])
    response = client.get(reverse("search"), {"q": ""})
    html = response.content.decode()
    assert response.status_code == 200 and 'name="q"' in html and 'class="search-results"' not in html


def test_the_header_has_a_search_box_for_signed_in_users(client, search_world, personas):
    client.force_login(personas["viewer"])
    html = client.get(reverse("cluster_list")).content.decode()
    assert f'action="{reverse("search")}"' in html
    client.logout()
    assert f'action="{reverse("search")}"' not in client.get(reverse("login")).content.decode()


def test_a_group_binding_gives_its_cluster(search_world, personas, django_user_model):
    from django.contrib.auth.models import Group

    team = Group.objects.create(name="team-b")
    user = django_user_model.objects.create_user(username="b-member", password="pw")
    user.groups.add(team)
    RoleBinding.objects.create(cluster=Cluster.objects.get(name=B), group=team, role=Role.VIEWER)
    assert [c.cluster for c in fleet_search.search(user, search_world.marker).clusters] == [B]


def test_a_file_holding_several_snapshots_gives_the_newest_ones_names(tmp_path):
    schema = pa.schema([("ts", pa.timestamp("ms", tz="UTC")), ("topic", pa.string())])
    rows = {
        "ts": [NOW, NOW, NOW + timedelta(seconds=1), NOW + timedelta(seconds=1)],
        "topic": ["old", "b", "b", "a"],
    }
    path = tmp_path / "snap-1.parquet"
    pq.write_table(pa.table(rows, schema=schema), path)
    got = snapshot_names.read_names(path, "topic")
    assert (got.names.to_pylist(), got.ts) == (["a", "b"], NOW + timedelta(seconds=1))


def test_a_newer_summary_replaces_the_cached_principals(search_world, personas):
    m = search_world.marker
    assert found(fleet_search.search(personas["admin"], f"{m}-dave", kinds=["principal"])) == {}
    ClusterSummary.objects.filter(cluster=search_world.b).update(
        taken_at=NOW + timedelta(seconds=INTERVAL_S), principals=[[f"User:{m}-dave", 2]]
    )
    result = fleet_search.search(personas["admin"], f"{m}-dave", kinds=["principal"])
    assert found(result) == {B: {"principal": ([f"User:{m}-dave=2"], 0)}}
    assert result.clusters[0].kinds[0].as_of == NOW + timedelta(seconds=INTERVAL_S)


def test_the_lake_is_listed_again_only_when_a_directory_changed(search_world, personas, monkeypatch):
    monkeypatch.setattr(snapshot_names, "RACY_NS", 0)  # trust any mtime (the test writes within seconds)
    listed = []
    real = snapshot_names.latest_file
    monkeypatch.setattr(snapshot_names, "latest_file", lambda *a: listed.append(a[1:]) or real(*a))
    query = f"{search_world.marker}-later"
    assert found(fleet_search.search(personas["admin"], query, kinds=["topic"])) == {}
    assert sorted(listed) == [(B, "partitions"), ("sandbox", "partitions")]
    listed.clear()
    assert found(fleet_search.search(personas["admin"], query, kinds=["topic"])) == {}
    assert listed == []  # nothing changed: no listing
    search_world.sandbox_a.create_topic(search_world.name("later"))
    search_world.snapshot(search_world.a, NOW + timedelta(seconds=INTERVAL_S))
    assert found(fleet_search.search(personas["admin"], query, kinds=["topic"])) == {
        "sandbox": {"topic": ([query], 0)}
    }
    assert listed == [("sandbox", "partitions")]


def test_a_substring_ignores_case_on_both_sides(search_world, personas):
    m = search_world.marker
    search_world.sandbox_b.create_topic(f"{m}-Mixed-CASE")
    search_world.snapshot(search_world.b, NOW + timedelta(seconds=INTERVAL_S))
    for query in (f"{m}-mixed-case", f"{m.upper()}-MIXED-case"):
        assert found(fleet_search.search(personas["admin"], query, kinds=["topic"])) == {
            B: {"topic": ([f"{m}-Mixed-CASE"], 0)}
        }
    exact = fleet_search.search(personas["admin"], f"{m}-Mixed-CASE$", regex=True, kinds=["topic"])
    assert found(exact) == {B: {"topic": ([f"{m}-Mixed-CASE"], 0)}}
    assert found(fleet_search.search(personas["admin"], f"{m}-mixed", regex=True, kinds=["topic"])) == {}


def test_each_link_is_the_url_reverse_gives():
    names = ["orders", "a b", "x%y", "ü-topic", "a?b#c", "semi;colon,=&+$!*'()", "~:@", "-"]
    topic, group, principal = (linker("sandbox", k) for k in ("topic", "group", "principal"))
    for name in names:
        assert topic(name) == reverse("topic_detail", kwargs={"name": "sandbox", "topic": name})
    for name in [*names, "g/h/i", "/lead"]:
        assert group(name) == reverse("group_detail", kwargs={"name": "sandbox", "group": name})
    assert (topic("a/b"), topic(""), group("")) == (None, None, None)  # no route takes these
    acls = reverse("acl_list", kwargs={"name": "sandbox"})
    assert principal("User:a b&c") == f"{acls}?principal=User%3Aa+b%26c"


def test_a_name_no_page_takes_is_shown_without_a_link(client, search_world, personas):
    search_world.sandbox_b.add_group("", offsets={(search_world.name("audit"), 0): 0})
    search_world.snapshot(search_world.b, NOW + timedelta(seconds=INTERVAL_S))
    client.force_login(personas["admin"])
    response = client.get(reverse("search"), {"q": "^$", "regex": "on", "kind": "group"})
    html = response.content.decode()
    assert response.status_code == 200
    section = html[html.index(f'id="cluster-{B}"') :]
    assert '<li><span class="mono"></span></li>' in section[: section.index("</section>")]
