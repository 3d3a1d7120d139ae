"""The message pages through the Django client: the browser (modes, filters, masking, follow polls,
refusals as 400 and 403, never a 500), the produce form, the data-access page and the topic page's link."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.messages.audit_names import DATA_GRANT as GRANT
from console.messages.audit_names import DATA_REVOKE as REVOKE
from console.messages.audit_names import MASK_RULE_ADD as RULE_ADD
from console.messages.audit_names import MASK_RULE_REMOVE as RULE_REMOVE
from console.models import AuditEvent, DataGrant, MaskingRule

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]

CARD = "4111111111111111"


def uniq(prefix: str = "msg") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def url(view: str, cluster, **kwargs) -> str:
    return reverse(view, kwargs={"name": cluster.name, **kwargs})


@pytest.fixture
def topic(sandbox, kafka_cluster):
    """A topic of two partitions with three messages in partition 0 (offsets 0-2) and one in 1."""
    name = uniq("orders")
    sandbox.create_topic(name, partitions=2)
    gw = gateway_for(kafka_cluster)
    for n in range(3):
        value = json.dumps({"order": n, "card": CARD}).encode()
        gw.produce_record(
            name, partition=0, key=f"k{n}".encode(), value=value, headers=[("trace", b"t-%d" % n)]
        )
    gw.produce_record(name, partition=1, key=None, value=b"plain text", headers=[])
    return name


def grant(cluster, user, prefix: str = "", **perms) -> DataGrant:
    return DataGrant.objects.create(cluster=cluster, user=user, prefix=prefix, **perms)


def rows(body: str) -> list[tuple[str, str]]:
    """(partition, offset) of each message row, in the page's order."""
    return re.findall(r'<tr data-partition="(\d+)" data-offset="(\d+)"', body)


def test_it_answers_403_with_the_reason_to_a_viewer_without_data_read(client, personas, kafka_cluster, topic):
    client.force_login(personas["viewer"])
    page = client.get(url("messages", kafka_cluster, topic=topic))
    read = client.get(url("messages", kafka_cluster, topic=topic), {"mode": "oldest", "count": "5"})
    assert (page.status_code, read.status_code) == (403, 403)
    for answer in (page, read):
        body = answer.content.decode()
        assert (
            f"You need the &#x27;data.read&#x27; permission on cluster &#x27;{kafka_cluster.name}&#x27;"
            in body
        )
        assert CARD not in body and "plain text" not in body
    denied = AuditEvent.objects.filter(action="messages.read", outcome="refused")
    assert [(e.actor_name, e.cluster_name) for e in denied] == [("viewer", kafka_cluster.name)]


def test_it_opens_without_reading_and_reads_the_newest_messages(client, personas, kafka_cluster, topic):
    grant(kafka_cluster, personas["viewer"], prefix="orders.", read=True)
    client.force_login(personas["viewer"])
    opened = client.get(url("messages", kafka_cluster, topic=topic))
    assert opened.status_code == 200
    assert "Choose where to start and press Read." in opened.content.decode()
    assert not AuditEvent.objects.filter(action="messages.read").exists()

    answer = client.get(
        url("messages", kafka_cluster, topic=topic), {"mode": "newest", "partition": "0", "count": "2"}
    )
    body = answer.content.decode()
    assert answer.status_code == 200
    assert rows(body) == [("0", "1"), ("0", "2")]
    assert "Read 2, showing 2." in body
    assert '<code class="raw">k2</code>' in body and "t-2" in body
    assert 'id="produce-link"' not in body  # read only
    assert "Unmasked, because" not in body  # no unmasked grant: no reason field
    read = AuditEvent.objects.get(action="messages.read")
    assert (read.actor_name, read.outcome) == ("viewer", "success")


def test_it_masks_a_json_field_and_shows_the_rule_without_the_raw_value(
    client, personas, kafka_cluster, topic
):
    grant(kafka_cluster, personas["viewer"], read=True, unmasked=True)
    MaskingRule.objects.create(
        cluster=kafka_cluster, prefix="orders.", kind="json_path", expression="$.card", note="PAN"
    )
    client.force_login(personas["viewer"])
    answer = client.get(
        url("messages", kafka_cluster, topic=topic), {"mode": "oldest", "partition": "0", "count": "5"}
    )
    body = answer.content.decode()
    assert answer.status_code == 200
    assert rows(body) == [("0", "0"), ("0", "1"), ("0", "2")]
    assert CARD not in body
    assert body.count("&quot;***&quot;") == 3 and body.count('class="muted masked-by"') == 3
    assert 'id="masking"' in body and "$.card" in body
    assert "Unmasked, because" in body  # the grant allows asking for unmasked reads

    unmasked = client.get(
        url("messages", kafka_cluster, topic=topic),
        {"mode": "oldest", "partition": "0", "count": "1", "reason": "INC-42 card mismatch"},
    )
    assert CARD in unmasked.content.decode() and "Unmasked read" in unmasked.content.decode()
    reasons = [e.params["reason"] for e in AuditEvent.objects.filter(action="messages.read")]
    assert sorted(reasons) == ["", "INC-42 card mismatch"]


def test_it_refuses_bad_input_with_400_and_the_reason_never_a_500(client, personas, kafka_cluster, topic):
    client.force_login(personas["admin"])
    base = url("messages", kafka_cluster, topic=topic)
    no_partition = client.get(base, {"mode": "offset", "offset": "0"})
    out_of_range = client.get(base, {"mode": "oldest", "partition": "7"})
    bad_count = client.get(base, {"mode": "newest", "count": "501"})
    unknown = client.get(url("messages", kafka_cluster, topic=uniq("nothing")), {"mode": "newest"})
    # an unknown topic is not found, as the topic's own page and the API answer it
    assert [a.status_code for a in (no_partition, out_of_range, bad_count, unknown)] == [400, 400, 400, 404]
    assert 'id="browse-error"' in no_partition.content.decode()
    assert 'id="browse-error"' in out_of_range.content.decode()
    assert "Ensure this value is less than or equal to 500." in bad_count.content.decode()
    assert "Not found" in unknown.content.decode() and 'id="browse-error"' not in unknown.content.decode()


def test_it_follows_with_the_cursor_and_stops_polling_when_asked(client, personas, kafka_cluster, topic):
    client.force_login(personas["admin"])
    base = url("messages", kafka_cluster, topic=topic)
    first = client.get(base, {"mode": "follow"})
    body = first.content.decode()
    assert first.status_code == 200 and 'id="follow-tail"' in body and 'hx-trigger="every 2s"' in body
    assert "cursor=0%3A3%2C1%3A1" in body  # where the next poll starts: the end of each partition
    gateway_for(kafka_cluster).produce_record(topic, partition=1, key=b"late", value=b"arrived", headers=[])

    poll = client.get(base, {"mode": "follow", "cursor": "0:3,1:1"}, headers={"HX-Request": "true"})
    body = poll.content.decode()
    assert poll.status_code == 200 and rows(body) == [("1", "1")]
    assert "arrived" in body and "cursor=0%3A3%2C1%3A2" in body and "<html" not in body
    idle = client.get(base, {"mode": "follow", "cursor": "0:3,1:2"}, headers={"HX-Request": "true"})
    assert idle.status_code == 200 and rows(idle.content.decode()) == []
    stop = client.get(
        base, {"mode": "follow", "cursor": "0:3,1:2", "stop": "1"}, headers={"HX-Request": "true"}
    )
    assert stop.status_code == 286 and "Stopped following." in stop.content.decode()
    refused = client.get(base, {"mode": "follow", "cursor": "0:3,9:0"}, headers={"HX-Request": "true"})
    assert refused.status_code == 286 and "Stopped following:" in refused.content.decode()
    client.force_login(personas["viewer"])  # no data grant (or it was revoked while following)
    denied = client.get(base, {"mode": "follow", "cursor": "0:3,1:2"}, headers={"HX-Request": "true"})
    assert (
        denied.status_code == 286
        and "You need the &#x27;data.read&#x27; permission" in denied.content.decode()
    )


def test_it_produces_through_the_form_and_links_to_read_it_back(client, personas, kafka_cluster, topic):
    grant(kafka_cluster, personas["operator"], read=True, write=True)
    client.force_login(personas["operator"])
    produce = url("messages_produce", kafka_cluster, topic=topic)
    answer = client.post(
        produce,
        {"partition": "1", "key": "cust-9", "value": '{"hello": 1}', "headers": "trace=abc\nsource=console"},
    )
    body = answer.content.decode()
    assert answer.status_code == 200
    assert "Written to partition 1 at offset" in body and ">1</span>" in body
    back = reverse("messages", kwargs={"name": kafka_cluster.name, "topic": topic})
    assert f'href="{back}?mode=offset&amp;partition=1&amp;offset=1&amp;count=1"' in body
    read = client.get(back, {"mode": "offset", "partition": "1", "offset": "1", "count": "1"})
    shown = read.content.decode()
    assert rows(shown) == [("1", "1")] and "cust-9" in shown and "abc" in shown and "console" in shown
    event = AuditEvent.objects.filter(action="messages.produce").latest("pk")
    assert event.actor_name == "operator" and '{"hello": 1}' not in json.dumps(event.params)


def test_it_refuses_bad_header_lines_by_number_and_writes_nothing(client, personas, kafka_cluster, topic):
    client.force_login(personas["admin"])
    answer = client.post(
        url("messages_produce", kafka_cluster, topic=topic),
        {"partition": "1", "value": "x", "headers": "good=1\nno equals sign\n\n=empty-name"},
    )
    body = answer.content.decode()
    assert answer.status_code == 200
    assert "Line 2: &#x27;no equals sign&#x27; is not name=value." in body
    assert "Line 4: &#x27;=empty-name&#x27; is not name=value." in body
    assert "Written to partition" not in body
    assert not AuditEvent.objects.filter(action="messages.produce").exists()
    assert gateway_for(kafka_cluster).partition_bounds(topic)[1] == (0, 1)


def test_it_refuses_the_produce_form_without_data_write(client, personas, kafka_cluster, topic):
    grant(kafka_cluster, personas["operator"], read=True)
    client.force_login(personas["operator"])
    produce = url("messages_produce", kafka_cluster, topic=topic)
    assert client.get(produce).status_code == 403
    refused = client.post(produce, {"partition": "1", "value": "x"})
    assert refused.status_code == 403 and "data.write" in refused.content.decode()
    assert gateway_for(kafka_cluster).partition_bounds(topic)[1] == (0, 1)


def test_it_lets_an_admin_grant_and_mask_and_nobody_else(client, personas, kafka_cluster):
    page = url("data_access", kafka_cluster)
    client.force_login(personas["operator"])
    assert client.get(page).status_code == 403
    client.force_login(personas["admin"])
    viewer = personas["viewer"]
    added = client.post(
        page, {"add": "grant", "grant-user": viewer.pk, "grant-prefix": "team-a.", "grant-read": "on"}
    )
    assert added.status_code == 302
    ruled = client.post(
        page, {"add": "rule", "rule-prefix": "team-a.", "rule-kind": "header", "rule-expression": "auth"}
    )
    assert ruled.status_code == 302
    bad = client.post(page, {"add": "grant", "grant-prefix": "team a"})
    assert bad.status_code == 200 and "Choose a user or a group" in bad.content.decode()
    body = client.get(page).content.decode()
    assert "user:viewer" in body and "team-a.*" in body and '<code class="raw">auth</code>' in body
    assert list(DataGrant.objects.values_list("user__username", "prefix", "read", "write", "unmasked")) == [
        ("viewer", "team-a.", True, False, False)
    ]
    rule = MaskingRule.objects.get()
    grant_row = DataGrant.objects.get()
    client.post(url("data_grant_remove", kafka_cluster, grant_id=grant_row.pk))
    client.post(url("masking_rule_remove", kafka_cluster, rule_id=rule.pk))
    assert not DataGrant.objects.exists() and not MaskingRule.objects.exists()
    changes = AuditEvent.objects.filter(action__in=(GRANT, REVOKE, RULE_ADD, RULE_REMOVE), outcome="success")
    assert sorted(changes.values_list("action", "actor_name")) == sorted(
        [(GRANT, "admin"), (RULE_ADD, "admin"), (REVOKE, "admin"), (RULE_REMOVE, "admin")]
    )


def test_it_links_the_messages_from_the_topic_page_only_for_readers(client, personas, kafka_cluster, topic):
    link = f'href="{url("messages", kafka_cluster, topic=topic)}"'
    client.force_login(personas["viewer"])
    assert link not in client.get(url("topic_detail", kafka_cluster, topic=topic)).content.decode()
    grant(kafka_cluster, personas["viewer"], prefix="orders.", read=True)
    assert link in client.get(url("topic_detail", kafka_cluster, topic=topic)).content.decode()
    client.force_login(personas["admin"])
    assert (
        'href="/c/sandbox/data-access/"' in client.get(url("cluster_access", kafka_cluster)).content.decode()
    )


def test_it_finds_the_reads_and_writes_on_the_audit_page(client, personas, kafka_cluster, topic):
    client.force_login(personas["admin"])
    client.get(url("messages", kafka_cluster, topic=topic), {"mode": "oldest", "partition": "1"})
    client.post(url("messages_produce", kafka_cluster, topic=topic), {"partition": "1", "value": "v"})
    body = client.get(reverse("audit_list"), {"action": "messages"}).content.decode()
    assert "messages.read" in body and "messages.produce" in body


def test_it_offers_a_replay_of_a_message_shown_as_it_is_to_writers_only(
    client, personas, kafka_cluster, topic
):
    MaskingRule.objects.create(cluster=kafka_cluster, prefix="orders.", kind="json_path", expression="$.card")
    grant(kafka_cluster, personas["viewer"], read=True)
    base = url("messages", kafka_cluster, topic=topic)
    client.force_login(personas["admin"])
    body = client.get(base, {"mode": "oldest", "count": "10"}).content.decode()
    assert rows(body) == [("0", "0"), ("0", "1"), ("0", "2"), ("1", "0")]
    assert body.count('class="replay"') == 1  # the masked messages are not offered
    form = body[
        body.index('<form method="post" action="' + url("messages_produce", kafka_cluster, topic=topic)) :
    ]
    form = form[: form.index("</form>")]
    assert re.findall(r'name="(\w+)" value="([^"]*)"', form)[1:] == [
        ("partition", "1"),
        ("key", ""),
        ("value", "plain text"),
        ("headers", ""),
        ("from", "1:0"),
        ("action", "fill"),
    ]  # after the CSRF token; the value travels in the POST body, never in a URL (nor a log of one)
    fill = {
        "action": "fill",
        "partition": "1",
        "key": "",
        "value": "plain text",
        "headers": "a=1",
        "from": "1:0",
    }
    filled = client.post(url("messages_produce", kafka_cluster, topic=topic), fill)
    page = filled.content.decode()
    assert filled.status_code == 200 and 'id="copied"' in page and "Written to partition" not in page
    assert ">\nplain text</textarea>" in page and ">\na=1</textarea>" in page and 'value="1"' in page
    assert not AuditEvent.objects.filter(action="messages.produce").exists()
    assert gateway_for(kafka_cluster).partition_bounds(topic)[1] == (0, 1)
    client.force_login(personas["viewer"])
    assert 'class="replay"' not in client.get(base, {"mode": "oldest", "count": "10"}).content.decode()


def test_it_reads_from_a_time_with_filters_decodings_and_long_values_folded(
    client, personas, kafka_cluster, topic
):
    client.force_login(personas["admin"])
    base = url("messages", kafka_cluster, topic=topic)
    later = (datetime.now(UTC) + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S")
    earlier = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S")
    none_yet = client.get(base, {"mode": "timestamp", "timestamp": later})
    assert none_yet.status_code == 200 and "No messages in this range." in none_yet.content.decode()
    since = client.get(base, {"mode": "timestamp", "timestamp": earlier, "partition": "0"}).content.decode()
    assert rows(since) == [("0", "0"), ("0", "1"), ("0", "2")]
    by_key = client.get(base, {"mode": "oldest", "key": "k1"}).content.decode()
    by_path = client.get(base, {"mode": "oldest", "json_path": "$.order=2"}).content.decode()
    assert (rows(by_key), rows(by_path)) == ([("0", "1")], [("0", "2")])
    assert "Read 4, showing 1." in by_key
    as_hex = client.get(base, {"mode": "oldest", "partition": "1", "decode": "hex"}).content.decode()
    assert "70 6c 61 69 6e 20 74 65 78 74" in as_hex  # "plain text"
    long_value = "x" * 5000
    gateway_for(kafka_cluster).produce_record(topic, partition=1, key=None, value=long_value.encode())
    folded = client.get(base, {"mode": "offset", "partition": "1", "offset": "1"}).content.decode()
    assert '<details><summary class="mono raw">' + "x" * 120 + "…</summary>" in folded
    assert f'<pre class="raw">{long_value}</pre></details>' in folded
