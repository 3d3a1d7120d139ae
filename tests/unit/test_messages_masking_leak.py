"""A masked value never leaves the server: with masking rules of all three kinds on a topic whose
message carries a secret in a JSON field, in a header and as a card number in its text, the secret is
in none of the page's HTML, the API's JSON, the CLI's stdout and stderr, the audit rows or any log
record the process wrote (the root logger at DEBUG), in any decoding; "***" stands where it was. A
user without ``data.read`` gets 403 (exit 3) and no part of the message at every door."""

from __future__ import annotations

import binascii
import json
import logging

import pytest
from django.forms.models import model_to_dict
from django.urls import reverse

from console.models import AuditEvent
from tests.unit.kafka_cli import kafka
from tests.unit.matrix_world import uniq
from tests.unit.test_api_endpoints import _caller

pytestmark = pytest.mark.django_db

SSN = "SSN-555-12-3456"
TOKEN = "tok-9f8e7d6c5b"
CARD = "4111 1111 1111 1111"
VISIBLE = "visible-marker-42"  # a part of the message no rule masks: absent means no data at all
VALUE = json.dumps({"customer": {"name": VISIBLE, "ssn": SSN}, "note": f"card {CARD} on file"})
RULES = (("json_path", "$.customer.ssn"), ("header", "authorization"), ("regex", r"\d{4}(?: \d{4}){3}"))
DECODINGS = ("auto", "text", "json", "hex")


def _hex(text: str) -> str:
    return binascii.hexlify(text.encode(), " ").decode()


# every form a secret could take on the way out: as text, JSON-escaped, and in the hex view
FORBIDDEN = tuple(f for s in (SSN, TOKEN, CARD) for f in (s, json.dumps(s)[1:-1], _hex(s), s.encode().hex()))


def leaks(text: str) -> list[str]:
    return [f for f in FORBIDDEN if f in text]


@pytest.fixture
def world(sandbox, kafka_cluster, personas, client):
    topic = uniq("leak")
    sandbox.create_topic(topic, partitions=1, replication_factor=1)
    api = _caller(client, personas)
    for kind, expression in RULES:
        added = api(
            "admin", "post", "masking-rules", {"kind": kind, "expression": expression, "prefix": topic}, name="sandbox"
        )  # fmt: skip
        assert added.status_code == 201, added.content
    return topic, api


def _logged(records: list[logging.LogRecord]) -> str:
    parts = []
    for r in records:
        parts += [r.getMessage(), repr(r.args), r.exc_text or "", str(getattr(r, "stack_info", "") or "")]
    return "\n".join(parts)


def _audited() -> str:
    return "\n".join(json.dumps(model_to_dict(e), default=str) for e in AuditEvent.objects.order_by("pk"))


def test_a_masked_value_is_in_no_answer_no_audit_row_and_no_log(world, client, personas, caplog, monkeypatch):
    topic, api = world
    caplog.set_level(logging.DEBUG)  # the root logger: every record of every library
    made = api(
        "admin", "post", "topic-messages",
        {"partition": 0, "key": "cust-1", "value": VALUE, "headers": [{"name": "authorization", "value": f"Bearer {TOKEN}"}]},
        name="sandbox", topic=topic,
    )  # fmt: skip
    assert made.status_code == 201, made.content
    seen: dict[str, str] = {}

    client.force_login(personas["admin"])
    page = reverse("messages", kwargs={"name": "sandbox", "topic": topic})
    for how in DECODINGS:
        html = client.get(page, {"mode": "oldest", "partition": 0, "decode": how})
        assert html.status_code == 200
        seen[f"page {how}"] = html.content.decode()
    follow = client.get(page, {"mode": "follow", "cursor": "0:0"}, HTTP_HX_REQUEST="true")
    seen["page follow"] = follow.content.decode()

    for how in DECODINGS:
        got = api(
            "admin",
            "get",
            "topic-messages",
            {"mode": "oldest", "partition": 0, "decode": how},
            name="sandbox",
            topic=topic,
        )
        assert got.status_code == 200 and got.json()["masked"] is True
        seen[f"api {how}"] = got.content.decode()

    props = [
        "--property",
        "print.key=true",
        "--property",
        "print.headers=true",
        "--property",
        "print.timestamp=true",
    ]
    for how in DECODINGS:
        for output in ("text", "json"):
            code, out = kafka(
                "messages", "consume", "--topic", topic, "--from-beginning", "--decode", how, "--output", output,
                *props, "--as", "admin", stderr=True,
            )  # fmt: skip
            assert code == 0, out
            seen[f"cli {how} {output}"] = out

    for door, text in seen.items():
        assert leaks(text) == [], door
        shown = _hex if " hex" in door else str  # the hex view shows the masked bytes in hex
        assert shown("***") in text and shown(VISIBLE) in text, door
    assert "Bearer ***" not in seen["api text"]  # a header rule masks the header's whole value
    line = seen["cli text text"].splitlines()[0].split("\t")
    assert line[1:3] == ["authorization:***", "cust-1"]
    assert json.loads(line[3]) == {"customer": {"name": VISIBLE, "ssn": "***"}, "note": "card *** on file"}
    assert leaks(_audited()) == []
    reads = AuditEvent.objects.filter(action="messages.read")
    assert reads.count() == 4 + 1 + 4 + 8 and all(e.actor_name.startswith("admin") for e in reads)
    assert leaks(_logged(caplog.records)) == []
    assert caplog.records  # the capture ran


def test_a_user_without_data_read_gets_nothing_at_any_door(world, client, personas, caplog):
    topic, api = world
    caplog.set_level(logging.DEBUG)
    made = api(
        "admin", "post", "topic-messages", {"partition": 0, "value": VALUE}, name="sandbox", topic=topic
    )
    assert made.status_code == 201
    client.force_login(personas["viewer"])
    page = reverse("messages", kwargs={"name": "sandbox", "topic": topic})
    html = client.get(page, {"mode": "oldest", "partition": 0})
    got = api(
        "viewer", "get", "topic-messages", {"mode": "oldest", "partition": 0}, name="sandbox", topic=topic
    )
    code, out = kafka(
        "messages", "consume", "--topic", topic, "--from-beginning", "--as", "viewer", stderr=True
    )
    assert (html.status_code, got.status_code, code) == (403, 403, 3)
    for text in (html.content.decode(), got.content.decode(), out, _logged(caplog.records)):
        assert leaks(text) == [] and VISIBLE not in text
    assert "data.read" in got.json()["error"]["message"] and "data.read" in out
    assert not AuditEvent.objects.filter(
        action="messages.read", actor_name="viewer", outcome="success"
    ).exists()
