"""A topic's messages through the API: browse (every mode, filters, masking, follow) and produce, under
the data grants; the grants and masking rules managed by cluster admins; refusals 400/403/404."""

from __future__ import annotations

import json

import pytest

from console.models import AuditEvent, DataGrant, MaskingRule
from tests.unit.matrix_world import uniq
from tests.unit.test_api_endpoints import _caller

pytestmark = pytest.mark.django_db

CARD = "4111 1111 1111 1111"


@pytest.fixture
def api(client, personas):
    return _caller(client, personas)


@pytest.fixture
def topic(sandbox, kafka_cluster):
    name = uniq("msgapi")
    sandbox.create_topic(name, partitions=2, replication_factor=1)
    return name


def produce(
    api, topic: str, value: str | None, *, key: str | None = None, partition=0, headers=(), who="admin"
):
    body = {"partition": partition, "key": key, "value": value, "headers": [dict(h) for h in headers]}
    made = api(who, "post", "topic-messages", body, name="sandbox", topic=topic)
    assert made.status_code == 201, made.content
    return made.json()


def browse(api, topic: str, who: str = "admin", **params):
    return api(who, "get", "topic-messages", params, name="sandbox", topic=topic)


def test_it_produces_and_reads_back_a_message_with_its_key_and_headers(api, topic):
    made = produce(
        api, topic, '{"id": 7}', key=" order-7 ", headers=[{"name": "trace", "value": "abc"}, {"name": "empty", "value": None}]
    )  # fmt: skip
    assert made["partition"] == 0 and made["offset"] == 0 and made["timestamp"] > 0
    got = browse(api, topic, mode="offset", partition=0, offset=0, count=10)
    assert got.status_code == 200, got.content
    assert got["Cache-Control"].startswith("max-age=0") and "no-store" in got["Cache-Control"]
    assert got.json() == {
        "messages": [
            {
                "partition": 0,
                "offset": 0,
                "timestamp": made["timestamp"],
                "timestamp_type": "CreateTime",
                "key": " order-7 ",
                "key_kind": "text",
                "value": '{\n  "id": 7\n}',
                "value_kind": "json",
                "schema_id": None,
                "headers": [["trace", "abc"], ["empty", ""]],
                "size": len(" order-7 ") + len('{"id": 7}') + len("trace") + len("abc") + len("empty"),
                "masked_by": [],
            }
        ],
        "masked": True,
        "rules": [],
        "cursor": {"0": 1},
        "stopped": "reached the high watermark",
        "scanned": 1,
    }
    read = AuditEvent.objects.filter(action="messages.read").latest("pk")
    assert read.actor_name.startswith("admin [token ") and read.outcome == "success"
    assert (read.params["offsets"], read.params["shown"], read.params["masked"]) == ({"0": "0..0"}, 1, True)


def test_it_browses_by_every_mode_with_filters_and_decodings(api, topic):
    for i in range(4):
        produce(api, topic, json.dumps({"n": i, "kind": "even" if i % 2 == 0 else "odd"}), key=f"k{i}")
    produce(api, topic, "plain text", key="other", partition=1)

    def offsets(**params) -> list[tuple[int, int]]:
        got = browse(api, topic, **params)
        assert got.status_code == 200, got.content
        return [(m["partition"], m["offset"]) for m in got.json()["messages"]]

    assert offsets(mode="oldest", partition=0, count=2) == [(0, 0), (0, 1)]
    assert offsets(mode="newest", partition=0, count=2) == [(0, 2), (0, 3)]
    assert offsets(mode="offset", partition=0, offset=3) == [(0, 3)]
    assert sorted(offsets(mode="oldest")) == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    assert offsets(mode="timestamp", partition=0, timestamp=0, count=1) == [(0, 0)]
    assert offsets(mode="oldest", partition=0, key_contains="k2") == [(0, 2)]
    assert offsets(mode="oldest", partition=0, json_path="$.kind=odd") == [(0, 1), (0, 3)]
    assert offsets(mode="oldest", value_contains="plain") == [(1, 0)]
    hexed = browse(api, topic, mode="offset", partition=1, offset=0, decode="hex").json()["messages"][0]
    assert (hexed["value"], hexed["value_kind"]) == ("70 6c 61 69 6e 20 74 65 78 74", "hex")


def test_it_follows_new_messages_through_the_cursor(api, topic):
    first = browse(api, topic, mode="follow", partition=0)
    assert first.status_code == 200 and first.json()["messages"] == []
    cursor = first.json()["cursor"]
    produce(api, topic, "new one")
    text = ",".join(f"{p}:{o}" for p, o in cursor.items())
    got = browse(api, topic, mode="follow", partition=0, cursor=text).json()
    assert [m["value"] for m in got["messages"]] == ["new one"] and got["cursor"] == {"0": 1}
    again = browse(api, topic, mode="follow", partition=0, cursor="0:1").json()
    assert again["messages"] == [] and again["cursor"] == {"0": 1}


def test_it_masks_on_the_server_with_the_rules_shown(api, topic):
    rules = [
        ("json_path", "$.card.number"),
        ("header", "authorization"),
        ("regex", r"\d{4} \d{4} \d{4} \d{4}"),
    ]
    for kind, expression in rules:
        added = api(
            "admin",
            "post",
            "masking-rules",
            {"kind": kind, "expression": expression, "prefix": topic},
            name="sandbox",
        )
        assert added.status_code == 201, added.content
    value = json.dumps({"card": {"number": "5500-0000-0000-0004"}, "note": f"paid with {CARD}"})
    produce(api, topic, value, headers=[{"name": "authorization", "value": "Bearer s3cr3t"}])
    got = browse(api, topic, mode="oldest", partition=0)
    body = got.json()
    assert got.status_code == 200 and body["masked"] is True and len(body["rules"]) == 3
    text = got.content.decode()
    assert "5500-0000-0000-0004" not in text and CARD not in text and "s3cr3t" not in text
    m = body["messages"][0]
    assert json.loads(m["value"]) == {"card": {"number": "***"}, "note": "paid with ***"}
    assert m["headers"] == [["authorization", "***"]] and len(m["masked_by"]) == 3
    # a filter runs on the masked message: it cannot find what the mask hid
    assert browse(api, topic, mode="oldest", partition=0, value_contains="5500").json()["messages"] == []


def test_it_refuses_bad_input_with_400_an_unknown_topic_with_404_and_no_grant_with_403(api, topic):
    assert browse(api, topic, mode="offset").status_code == 400  # no partition and offset
    assert browse(api, topic, count=501).status_code == 400
    bad_cursor = browse(api, topic, mode="follow", cursor="zero:1")
    assert bad_cursor.status_code == 400 and "cursor" in bad_cursor.json()["error"]["fields"]
    below = browse(api, topic, mode="offset", partition=5, offset=0)
    assert below.status_code == 400 and "partition" in below.json()["error"]["message"]
    bad_path = browse(api, topic, mode="oldest", json_path="$[")
    assert bad_path.status_code == 400 and "JSON path" in bad_path.json()["error"]["message"]
    missing = browse(api, "no-such-topic-here", mode="oldest")
    assert missing.status_code == 404
    assert (
        missing.json()["error"]["message"] == "There is no topic 'no-such-topic-here' on cluster 'sandbox'."
    )
    denied = browse(api, topic, who="viewer", mode="oldest")
    assert denied.status_code == 403
    assert denied.json()["error"]["message"] == (
        f"You need the 'data.read' permission on cluster 'sandbox' for topic '{topic}'."
    )
    assert browse(api, topic, who="outsider", mode="oldest").status_code == 404  # cannot see the cluster
    refused = api("viewer", "post", "topic-messages", {"value": "x"}, name="sandbox", topic=topic)
    assert refused.status_code == 403 and "data.write" in refused.json()["error"]["message"]
    assert browse(api, topic, mode="newest", partition=0).json()["messages"] == []  # nothing was produced


def test_grants_and_masking_rules_are_managed_by_cluster_admins(api, topic, personas):
    assert api("operator", "get", "data-grants", name="sandbox").status_code == 403
    grant = {"user": "viewer", "prefix": topic, "read": True, "write": True}
    assert api("operator", "post", "data-grants", grant, name="sandbox").status_code == 403
    made = api("admin", "post", "data-grants", grant, name="sandbox")
    assert made.status_code == 201, made.content
    g = made.json()
    assert g == {
        "id": g["id"],
        "subject": "user:viewer",
        "prefix": topic,
        "read": True,
        "write": True,
        "unmasked": False,
    }
    assert [r["id"] for r in api("admin", "get", "data-grants", name="sandbox").json()["results"]] == [
        g["id"]
    ]
    assert api("admin", "post", "data-grants", {"user": "nobody-at-all"}, name="sandbox").status_code == 400
    # the viewer now reads and writes that topic
    produce(api, topic, "from the viewer", who="viewer")
    assert browse(api, topic, who="viewer", mode="oldest", partition=0).status_code == 200
    revoked = api("admin", "post", "data-grant-revoke", name="sandbox", grant_id=g["id"])
    assert revoked.status_code == 200 and revoked.json()["revoked"] == g
    assert not DataGrant.objects.exists()
    assert browse(api, topic, who="viewer", mode="oldest", partition=0).status_code == 403
    assert api("admin", "post", "data-grant-revoke", name="sandbox", grant_id=g["id"]).status_code == 404

    rule = {"prefix": "team-a.", "kind": "header", "expression": "authorization", "note": "tokens"}
    assert api("operator", "post", "masking-rules", rule, name="sandbox").status_code == 403
    added = api("admin", "post", "masking-rules", rule, name="sandbox")
    assert added.status_code == 201
    r = added.json()
    assert r == {**rule, "id": r["id"], "label": "header authorization (topics 'team-a.*')"}
    listed = api("admin", "get", "masking-rules", name="sandbox").json()["results"]
    assert [x["id"] for x in listed] == [r["id"]]
    bad = api("admin", "post", "masking-rules", {"kind": "regex", "expression": "a*"}, name="sandbox")
    assert bad.status_code == 400 and MaskingRule.objects.count() == 1
    gone = api("admin", "post", "masking-rule-remove", name="sandbox", rule_id=r["id"])
    assert gone.status_code == 200 and not MaskingRule.objects.exists()
    assert api("admin", "post", "masking-rule-remove", name="sandbox", rule_id=r["id"]).status_code == 404
    actions = list(
        AuditEvent.objects.filter(action__startswith="messages.")
        .exclude(action__in=["messages.read", "messages.produce"])
        .values_list("action", "outcome")
    )
    assert ("messages.grant", "success") in actions and ("messages.revoke", "success") in actions
    assert ("messages.rule.add", "success") in actions and ("messages.rule.remove", "success") in actions


def test_an_unmasked_read_needs_a_grant_that_allows_it_and_is_audited_with_its_reason(
    api, topic, personas, kafka_cluster
):
    added = api(
        "admin",
        "post",
        "masking-rules",
        {"kind": "header", "expression": "authorization", "prefix": topic},
        name="sandbox",
    )
    assert added.status_code == 201
    produce(api, topic, "v", headers=[{"name": "authorization", "value": "Bearer t0k"}])
    DataGrant.objects.create(cluster=kafka_cluster, user=personas["viewer"], prefix=topic, read=True)
    refused = browse(api, topic, who="viewer", mode="oldest", unmasked_reason="INC-42")
    assert refused.status_code == 403 and "unmasked" in refused.json()["error"]["message"]
    DataGrant.objects.filter(user=personas["viewer"]).update(unmasked=True)
    got = browse(api, topic, who="viewer", mode="oldest", unmasked_reason="INC-42").json()
    assert (got["masked"], got["rules"], got["messages"][0]["headers"]) == (
        False,
        [],
        [["authorization", "Bearer t0k"]],
    )
    read = AuditEvent.objects.filter(action="messages.read", outcome="success").latest("pk")
    assert (read.params["masked"], read.params["reason"]) == (False, "INC-42")
    masked = browse(api, topic, who="viewer", mode="oldest").json()
    assert masked["masked"] is True and masked["messages"][0]["headers"] == [["authorization", "***"]]
