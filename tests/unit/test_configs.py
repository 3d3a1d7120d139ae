"""Config services and pages: describe, diff, validate only, apply, sensitive masking, broker configs."""

from __future__ import annotations

import uuid

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from console.audit import store as audit
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.configs import plan as config_plan
from console.kafka import ConfigChange, ConfigEntry, ConfigResource, ConfigSynonym
from console.models import AuditEvent, TopicPolicy
from console.topics.policy import PolicyViolation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def value(cluster, resource: ConfigResource, key: str) -> ConfigEntry:
    return gateway_for(cluster).describe_configs([resource])[resource][key]


def alter(personas, cluster, resource: ConfigResource, *changes: ConfigChange, who: str = "operator"):
    """``who`` changes the resource's configs (the operator unless named)."""
    return configs.alter_configs(
        actor=personas[who], cluster=cluster, resource=resource, changes=list(changes)
    )


def entry(
    name, value, source="DEFAULT_CONFIG", *, read_only=False, sensitive=False, type_="STRING", synonyms=()
):
    return ConfigEntry(
        name, value, source, read_only, sensitive, source == "DEFAULT_CONFIG", tuple(synonyms), None, type_
    )


# -- the pure planner --------------------------------------------------------------------------------


def test_the_plan_shows_old_and_new_values_with_the_source_change():
    res = ConfigResource("TOPIC", "t")
    entries = {
        "retention.ms": entry(
            "retention.ms",
            "1000",
            "DYNAMIC_TOPIC_CONFIG",
            type_="LONG",
            synonyms=[
                ConfigSynonym("retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG"),
                ConfigSynonym("log.retention.ms", "604800000", "STATIC_BROKER_CONFIG"),
            ],
        ),
        "cleanup.policy": entry("cleanup.policy", "delete", type_="LIST"),
        "segment.bytes": entry("segment.bytes", "1073741824", type_="INT"),
    }
    diffs = config_plan.plan_changes(
        res,
        entries,
        [
            ConfigChange("retention.ms", "DELETE"),
            ConfigChange("cleanup.policy", "APPEND", "compact"),
            ConfigChange("segment.bytes", "SET", "1073741824"),
        ],
    )
    assert [(d.name, d.old_value, d.new_value, d.old_source, d.new_source) for d in diffs] == [
        ("retention.ms", "1000", "604800000", "DYNAMIC_TOPIC_CONFIG", "STATIC_BROKER_CONFIG"),
        ("cleanup.policy", "delete", "delete,compact", "DEFAULT_CONFIG", "DYNAMIC_TOPIC_CONFIG"),
        ("segment.bytes", "1073741824", "1073741824", "DEFAULT_CONFIG", "DYNAMIC_TOPIC_CONFIG"),
    ]


def test_the_plan_refuses_unknown_read_only_and_non_list_changes():
    res = ConfigResource("BROKER", "1")
    entries = {
        "broker.id": entry("broker.id", "1", "STATIC_BROKER_CONFIG", read_only=True, type_="INT"),
        "log.retention.ms": entry("log.retention.ms", None, type_="LONG"),
    }
    with pytest.raises(config_plan.ConfigPlanError) as info:
        config_plan.plan_changes(
            res,
            entries,
            [
                ConfigChange("no.such", "SET", "1"),
                ConfigChange("broker.id", "SET", "2"),
                ConfigChange("log.retention.ms", "APPEND", "5"),
            ],
        )
    assert len(info.value.errors) == 3
    assert "not a known config" in info.value.errors[0]
    assert "read-only" in info.value.errors[1]
    assert "not a list" in info.value.errors[2]


def test_sensitive_values_never_appear_in_the_diff():
    res = ConfigResource("BROKER", "1")
    entries = {"ssl.key.password": entry("ssl.key.password", None, sensitive=True, type_="PASSWORD")}
    (diff,) = config_plan.plan_changes(res, entries, [ConfigChange("ssl.key.password", "SET", "hunter2")])
    assert (
        diff.sensitive and diff.new_display == config_plan.HIDDEN and diff.old_display == config_plan.HIDDEN
    )


# -- against the sandbox -----------------------------------------------------------------------------


def test_it_describes_topic_configs_with_overrides_first(personas, kafka_cluster, topic):
    view = configs.describe_configs(
        actor=personas["viewer"], cluster=kafka_cluster, resource=configs.topic_resource(topic)
    )
    assert view.rows[0].name == "retention.ms" and view.rows[0].is_override
    assert all(not r.is_override for r in view.rows[1:])


def test_validate_only_changes_nothing_and_apply_changes_and_audits(personas, kafka_cluster, topic):
    res = configs.topic_resource(topic)
    change = [ConfigChange("retention.ms", "SET", "7200000")]
    dry = configs.alter_configs(
        actor=personas["operator"], cluster=kafka_cluster, resource=res, changes=change, validate_only=True
    )
    assert dry.ok and dry.validate_only
    assert value(kafka_cluster, res, "retention.ms").value == "1000"
    done = configs.alter_configs(
        actor=personas["operator"], cluster=kafka_cluster, resource=res, changes=change
    )
    assert done.ok
    assert value(kafka_cluster, res, "retention.ms").value == "7200000"
    events = list(AuditEvent.objects.filter(action__startswith="config.alter").order_by("id"))
    # The real change writes "requested" before Kafka is called, then its outcome, linked to it.
    assert [(e.action, e.outcome) for e in events] == [
        ("config.alter.validate", "success"),
        ("config.alter", "requested"),
        ("config.alter", "success"),
    ]
    assert events[2].params["requested_event"] == events[1].pk
    events = [events[0], events[2]]
    assert events[1].before == {"retention.ms": "1000"}
    assert events[1].after == {"retention.ms": "7200000"}
    assert events[1].targets == [f"topic:{topic}"]
    assert events[1].outcomes == {f"topic:{topic}": {"ok": True, "status": "applied", "confirmed": True}}
    assert audit.verify_chain().ok


def test_delete_resets_an_override_to_the_default(personas, kafka_cluster, topic):
    res = configs.topic_resource(topic)
    result = alter(personas, kafka_cluster, res, ConfigChange("retention.ms", "DELETE"))
    assert result.ok
    assert value(kafka_cluster, res, "retention.ms").source != "DYNAMIC_TOPIC_CONFIG"


def test_an_invalid_value_is_refused_by_kafka_validation_and_audited_as_failure(
    personas, kafka_cluster, topic
):
    res = configs.topic_resource(topic)
    result = alter(personas, kafka_cluster, res, ConfigChange("retention.ms", "SET", "soon"))
    assert not result.ok and result.error.name == "INVALID_CONFIG"
    assert value(kafka_cluster, res, "retention.ms").value == "1000"
    event = AuditEvent.objects.get(pk=result.event_id)
    assert event.outcome == "failure" and event.after is None


def test_the_policy_range_is_checked_before_kafka(personas, kafka_cluster, topic):
    TopicPolicy.objects.create(cluster=kafka_cluster, config_ranges={"retention.ms": {"max": 86400000}})
    with pytest.raises(PolicyViolation, match="config_ranges"):
        alter(
            personas,
            kafka_cluster,
            configs.topic_resource(topic),
            ConfigChange("retention.ms", "SET", "999999999999"),
        )
    assert not AuditEvent.objects.filter(action__startswith="config.").exists()


def test_broker_configs_and_sensitive_values_are_masked_in_the_audit(personas, kafka_cluster):
    res = configs.broker_resource(1)
    view = configs.describe_configs(actor=personas["viewer"], cluster=kafka_cluster, resource=res)
    sensitive = [r for r in view.rows if r.sensitive]
    assert all(r.value is None and r.display_value == config_plan.HIDDEN for r in sensitive)
    writable = next(r for r in sensitive if r.editable) if any(r.editable for r in sensitive) else None
    if writable is None:
        pytest.skip("the sandbox exposes no writable sensitive broker config")
    result = alter(personas, kafka_cluster, res, ConfigChange(writable.name, "SET", "s3cr3t-value"))
    event = AuditEvent.objects.get(pk=result.event_id)
    assert "s3cr3t-value" not in str(event.params) + str(event.before) + str(event.after)


def test_cluster_default_broker_configs_can_be_set(personas, kafka_cluster):
    res = configs.broker_resource(None)
    result = alter(personas, kafka_cluster, res, ConfigChange("log.retention.ms", "SET", "123456789"))
    assert result.ok, result.error
    assert result.diffs[0].new_source == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    assert value(kafka_cluster, res, "log.retention.ms").value == "123456789"
    alter(personas, kafka_cluster, res, ConfigChange("log.retention.ms", "DELETE"))


@pytest.mark.parametrize("who", ["viewer", "requester", "auditor"])
def test_only_operators_alter_configs(personas, kafka_cluster, topic, who):
    with pytest.raises(PermissionDenied, match="config.manage"):
        alter(
            personas,
            kafka_cluster,
            configs.topic_resource(topic),
            ConfigChange("retention.ms", "SET", "5"),
            who=who,
        )


# -- pages -------------------------------------------------------------------------------------------


def test_the_edit_page_previews_validates_then_applies(client, personas, kafka_cluster, topic):
    client.force_login(personas["operator"])
    page = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})
    form = {"op_0": "SET", "key_0": "retention.ms", "value_0": "5000"}
    preview = client.post(page, {**form, "action": "preview"}, headers={"HX-Request": "true"})
    assert (
        preview.status_code == 200
        and b'id="config-diff"' in preview.content
        and b"<html" not in preview.content
    )
    check = client.post(page, {**form, "action": "validate"}, headers={"HX-Request": "true"})
    assert b"Kafka accepts these changes" in check.content
    applied = client.post(page, {**form, "action": "apply"})
    assert applied.status_code == 302
    assert value(kafka_cluster, configs.topic_resource(topic), "retention.ms").value == "5000"


def test_the_edit_page_shows_plan_errors_with_200(client, personas, kafka_cluster, topic):
    client.force_login(personas["operator"])
    page = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})
    response = client.post(page, {"op_0": "SET", "key_0": "no.such.key", "value_0": "1", "action": "preview"})
    assert response.status_code == 200 and b"not a known config" in response.content


def test_viewers_see_configs_but_cannot_post(client, personas, kafka_cluster, topic):
    client.force_login(personas["viewer"])
    page = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})
    assert client.get(page).status_code == 200
    assert b'id="config-edit"' not in client.get(page).content
    assert client.post(page, {"op_0": "SET", "key_0": "retention.ms", "value_0": "1"}).status_code == 403


def test_the_broker_page_lists_brokers(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    response = client.get(reverse("broker_configs", kwargs={"name": kafka_cluster.name, "broker": "1"}))
    assert (
        response.status_code == 200 and b"broker.id" in response.content and b"broker 3" in response.content
    )


@pytest.mark.parametrize("action", ["preview", "validate", "apply"])
@pytest.mark.parametrize("htmx", [False, True])
def test_a_secret_config_value_is_write_only_in_the_editor(client, personas, kafka_cluster, action, htmx):
    secret = "hunter2-" + uuid.uuid4().hex
    client.force_login(personas["operator"])
    url = reverse("broker_configs", kwargs={"name": kafka_cluster.name, "broker": "1"})
    data = {"op_0": "SET", "key_0": "ssl.truststore.password", "value_0": secret, "action": action}
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.post(url, data, **headers, follow=True)
    assert response.status_code == 200
    assert secret.encode() not in response.content
    if action == "preview":
        assert b"type it again" in response.content.lower()
    assert secret not in str(list(AuditEvent.objects.values_list("params", "before", "after", "outcomes")))


def test_a_name_that_looks_secret_is_hidden_even_when_kafka_refuses_it(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    url = reverse("broker_configs", kwargs={"name": kafka_cluster.name, "broker": "1"})
    data = {"op_0": "SET", "key_0": "my.private.token", "value_0": "tok-123-secret", "action": "preview"}
    response = client.post(url, data)
    assert b"not a known config" in response.content and b"tok-123-secret" not in response.content


# -- human values and the "overrides only" filter ----------------------------------------------------


@pytest.mark.parametrize(
    ("key", "raw", "human"),
    [
        ("retention.ms", "604800000", "7 d"),
        ("segment.ms", "5400000", "1 h 30 min"),
        ("log.retention.hours", "168", "7 d"),
        ("offsets.retention.minutes", "10080", "7 d"),
        ("request.timeout.ms", "30000", "30 s"),
        ("linger.ms", "0", "0 ms"),
        ("log.roll.jitter.hours", "0", "0 h"),
        ("x.ms", "86400001", "≈ 1 d"),
        ("segment.bytes", "1073741824", "1 GiB"),
        ("max.message.bytes", "1048588", "≈ 1 MiB"),
        ("log.segment.bytes", "1610612736", "1.5 GiB"),
        ("segment.index.bytes", "512", "512 B"),
        ("leader.replication.throttled.rate", "10485760", "10 MiB/s"),
        ("follower.replication.throttled.rate", str(2**63 - 1), "unlimited"),
        ("remote.log.manager.copy.max.bytes.per.second", str(2**63 - 1), "unlimited"),
        ("retention.ms", "-1", "infinite"),
        ("log.retention.ms", "-1", "infinite"),
        ("retention.bytes", "-1", "unlimited"),
        ("log.retention.bytes", "-1", "unlimited"),
        ("local.retention.ms", "-2", "as retention.ms"),
        ("socket.receive.buffer.bytes", "-1", "OS default"),
        ("max.compaction.lag.ms", str(2**63 - 1), "infinite"),
        # left raw: other kinds of keys, negative values Kafka gives no meaning, lists, text, none
        ("segment.jitter.ms", "-5", None),
        ("min.insync.replicas", "2", None),
        ("cleanup.policy", "delete", None),
        ("retention.ms", "7d", None),
        ("retention.ms", None, None),
        ("log.roll.hours", str(2**63 - 2), None),
    ],
)
def test_config_values_are_humanised_by_key(key, raw, human):
    from console.formatting import human_config_value

    assert human_config_value(key, raw) == human


def _rows(body: str) -> dict[str, list[str]]:
    import re

    table = re.search(r'<table class="grid" id="configs">(.*?)</table>', body, re.S).group(1)
    return {
        name: [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for name, row in re.findall(r'<tr data-config="([^"]+)">(.*?)</tr>', table, re.S)
    }


def test_the_config_page_shows_the_human_value_beside_the_raw_one(client, personas, kafka_cluster, topic):
    res = configs.topic_resource(topic)
    change = [ConfigChange("retention.ms", "SET", "604800000"), ConfigChange("retention.bytes", "SET", "-1")]
    assert configs.alter_configs(
        actor=personas["operator"], cluster=kafka_cluster, resource=res, changes=change
    ).ok
    client.force_login(personas["viewer"])
    rows = _rows(
        client.get(reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})).text
    )
    assert rows["retention.ms"][1:3] == ["604800000", "7 d"]
    assert rows["retention.bytes"][1:3] == ["-1", "unlimited"]
    assert rows["cleanup.policy"][2] == ""  # not a duration or a size: raw only
    if "segment.bytes" in rows:
        assert rows["segment.bytes"][2] == "1 GiB"


def test_the_diff_shows_human_values_too(client, personas, kafka_cluster, topic):
    client.force_login(personas["operator"])
    page = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})
    body = {"op_0": "SET", "key_0": "retention.ms", "value_0": "86400000", "action": "preview"}
    diff = client.post(page, body, headers={"HX-Request": "true"}).text
    assert (
        '1000 <span class="human">(1 s)</span>' in diff
        and '86400000 <span class="human">(1 d)</span>' in diff
    )


def test_overrides_only_lists_only_the_entries_not_at_kafkas_default(client, personas, kafka_cluster, topic):
    client.force_login(personas["viewer"])
    page = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})
    everything = client.get(page).text
    assert 'name="overrides"' in everything and 'method="get"' in everything  # a plain form: no JS needed
    all_rows = _rows(everything)
    assert len(all_rows) > 5 and "cleanup.policy" in all_rows
    filtered = client.get(page, {"overrides": "1"})
    rows = _rows(filtered.text)
    assert filtered.status_code == 200 and "retention.ms" in rows
    assert set(rows) == {n for n, cells in all_rows.items() if cells[3] != "default"}
    assert f"{len(rows)} of {len(all_rows)} entries" in filtered.text and " checked" in filtered.text
    assert _rows(client.get(page, {"overrides": "on"}).text) == rows  # the checkbox's own value
    assert _rows(client.get(page, {"overrides": "nonsense"}).text) == all_rows

    view = configs.describe_configs(
        actor=personas["viewer"],
        cluster=kafka_cluster,
        resource=configs.topic_resource(topic),
        overrides_only=True,
    )
    assert view.shown and all(r.source != "DEFAULT_CONFIG" for r in view.shown)
    assert len(view.rows) == len(all_rows)  # the editor's key list keeps every key


def test_overrides_only_on_a_broker_page(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    page = reverse("broker_configs", kwargs={"name": kafka_cluster.name, "broker": "1"})
    rows = _rows(client.get(page, {"overrides": "1"}).text)
    assert rows and all(cells[3] != "default" for cells in rows.values())
    assert "broker.id" in rows  # server.properties sets it: not a built-in default
    assert (
        reverse("broker_detail", kwargs={"name": kafka_cluster.name, "broker": "1"}) in client.get(page).text
    )
