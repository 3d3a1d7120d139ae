"""Broker config changes are audited with what Kafka applied: brokers apply configs from the metadata log
after the change was answered (the sandbox lags like them), and a DELETE's diff names what applies then."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.audit import store as audit
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.configs import plan as config_plan
from console.kafka import ConfigChange, ConfigEntry, ConfigResource, ConfigSynonym
from console.models import AuditEvent

pytestmark = pytest.mark.django_db

RETENTION_NOTE = "log.retention.hours = 168 (default) applies: 604800000 ms (7 d)"


@pytest.fixture
def lagging(sandbox):
    """Brokers apply a changed broker config 0.5 s after the change was answered, as Kafka's do."""
    sandbox.set_broker_config_lag(0.5)
    yield sandbox
    sandbox.set_broker_config_lag(0)


def alter(personas, cluster, broker, *changes):
    return configs.alter_configs(
        actor=personas["operator"],
        cluster=cluster,
        resource=configs.broker_resource(broker),
        changes=[ConfigChange(*c) for c in changes],
    )


def event(result) -> AuditEvent:
    return AuditEvent.objects.get(pk=result.event_id)


def described(cluster, broker, key) -> str | None:
    res = configs.broker_resource(broker)
    return getattr(gateway_for(cluster).describe_configs([res])[res].get(key), "value", None)


def test_it_audits_a_per_broker_change_with_the_value_the_broker_applied(personas, kafka_cluster, lagging):
    target = {"broker:2": {"ok": True, "status": "applied", "confirmed": True}}
    steps = [
        (("log.cleaner.backoff.ms", "SET", "16001"), "15000", "16001"),
        (("log.cleaner.backoff.ms", "SET", "16002"), "16001", "16002"),
        (("log.retention.ms", "SET", "-5"), None, "-5"),
        (("log.cleaner.backoff.ms", "DELETE"), "16002", "15000"),
    ]
    for change, before, after in steps:
        result = alter(personas, kafka_cluster, 2, change)
        row = event(result)
        assert (row.action, row.outcome, row.targets) == ("config.alter", "success", ["broker:2"])
        assert (row.before, row.after) == ({change[0]: before}, {change[0]: after})
        assert row.outcomes == target
        assert (result.ok, result.confirmed, result.unconfirmed, result.message) == (True, True, (), "")
        assert described(kafka_cluster, 2, change[0]) == after
    deleted = alter(personas, kafka_cluster, 2, ("log.retention.ms", "DELETE"))
    row = event(deleted)
    assert (row.before, row.after) == ({"log.retention.ms": "-5"}, {"log.retention.ms": None})
    assert row.outcomes == {
        "broker:2": {**target["broker:2"], "applies": {"log.retention.ms": RETENTION_NOTE}}
    }
    assert described(kafka_cluster, 2, "log.retention.ms") is None
    assert audit.verify_chain().ok


def test_it_confirms_a_cluster_default_on_every_broker(personas, kafka_cluster, lagging):
    result = alter(personas, kafka_cluster, None, ("log.cleaner.backoff.ms", "SET", "17003"))
    # every broker has applied the default once the change is audited
    assert [described(kafka_cluster, b, "log.cleaner.backoff.ms") for b in (1, 2, 3)] == ["17003"] * 3
    assert (event(result).before, event(result).after) == (
        {"log.cleaner.backoff.ms": None},
        {"log.cleaner.backoff.ms": "17003"},
    )
    assert (result.ok, result.confirmed) == (True, True)
    result = alter(personas, kafka_cluster, None, ("log.cleaner.backoff.ms", "DELETE"))
    assert event(result).after == {"log.cleaner.backoff.ms": None}
    assert event(result).outcomes == {"broker:default": {"ok": True, "status": "applied", "confirmed": True}}
    assert [described(kafka_cluster, b, "log.cleaner.backoff.ms") for b in (1, 2, 3)] == ["15000"] * 3


def test_it_records_the_requested_value_as_unconfirmed_past_the_bound(
    personas, kafka_cluster, sandbox, settings
):
    settings.CONFIG_CONFIRM_TIMEOUT_S = 0.3
    sandbox.set_broker_config_lag(3)
    try:
        result = alter(personas, kafka_cluster, 3, ("log.cleaner.backoff.ms", "SET", "16003"))
    finally:
        sandbox.set_broker_config_lag(0)
    message = (
        "Kafka accepted the change, but Kafka did not show log.cleaner.backoff.ms changed within 0.3 s "
        "(brokers apply configs from the metadata log): the audit records the requested value, not yet "
        "confirmed."
    )
    assert (result.ok, result.confirmed, result.unconfirmed, result.message) == (
        True,
        False,
        ("log.cleaner.backoff.ms",),
        message,
    )
    row = event(result)
    assert (row.outcome, row.before, row.after) == (
        "success",
        {"log.cleaner.backoff.ms": "15000"},
        {"log.cleaner.backoff.ms": "16003"},
    )
    assert row.outcomes == {
        "broker:3": {
            "ok": True,
            "status": "applied",
            "confirmed": False,
            "unconfirmed": ["log.cleaner.backoff.ms"],
            "message": message,
        }
    }
    alter(personas, kafka_cluster, 3, ("log.cleaner.backoff.ms", "DELETE"))


def test_a_delete_diff_names_the_synonym_that_applies_not_as_the_keys_value(personas, kafka_cluster):
    alter(personas, kafka_cluster, 1, ("log.retention.ms", "SET", "-5"))
    (diff,) = configs.preview_changes(
        actor=personas["operator"],
        cluster=kafka_cluster,
        resource=configs.broker_resource(1),
        changes=[ConfigChange("log.retention.ms", "DELETE")],
    )
    # Kafka then reports log.retention.ms as null (default); log.retention.hours = 168 is what applies.
    assert (diff.old_display, diff.new_display, diff.old_source, diff.new_source) == (
        "-5",
        config_plan.NOT_SET,
        "DYNAMIC_BROKER_CONFIG",
        "DEFAULT_CONFIG",
    )
    assert diff.applies_note == RETENTION_NOTE
    alter(personas, kafka_cluster, 1, ("log.retention.ms", "DELETE"))


def test_the_plan_prefers_the_finest_unit_synonym_in_the_keys_unit():
    def entry(name, value, source, synonyms):
        return ConfigEntry(name, value, source, False, False, False, tuple(synonyms), None, "LONG")

    syn = [
        ConfigSynonym("log.retention.ms", "-5", "DYNAMIC_BROKER_CONFIG"),
        ConfigSynonym("log.retention.hours", "24", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        ConfigSynonym("log.retention.minutes", "30", "STATIC_BROKER_CONFIG"),
        ConfigSynonym("log.retention.hours", "168", "DEFAULT_CONFIG"),
    ]
    entries = {"log.retention.ms": entry("log.retention.ms", "-5", "DYNAMIC_BROKER_CONFIG", syn)}
    (diff,) = config_plan.plan_changes(
        ConfigResource("BROKER", "1"), entries, [ConfigChange("log.retention.ms", "DELETE")]
    )
    assert (diff.new_value, diff.applies_note) == (
        None,
        "log.retention.minutes = 30 (static broker) applies: 1800000 ms (30 min)",
    )
    # A same-named layer below (the cluster default) is the key's own value again: no note.
    own = [syn[0], ConfigSynonym("log.retention.ms", "1000", "DYNAMIC_DEFAULT_BROKER_CONFIG"), *syn[1:]]
    entries = {"log.retention.ms": entry("log.retention.ms", "-5", "DYNAMIC_BROKER_CONFIG", own)}
    (diff,) = config_plan.plan_changes(
        ConfigResource("BROKER", "1"), entries, [ConfigChange("log.retention.ms", "DELETE")]
    )
    assert (diff.new_value, diff.new_source, diff.applies_note) == (
        "1000",
        "DYNAMIC_DEFAULT_BROKER_CONFIG",
        "",
    )


def test_the_page_and_the_api_show_the_note_and_the_confirmation(client, personas, kafka_cluster):
    from console.identity import tokens

    alter(personas, kafka_cluster, 1, ("log.retention.ms", "SET", "-5"))
    client.force_login(personas["operator"])
    page = reverse("broker_configs", kwargs={"name": kafka_cluster.name, "broker": "1"})
    form = {"op_0": "DELETE", "key_0": "log.retention.ms", "value_0": "", "action": "preview"}
    preview = client.post(page, form, headers={"HX-Request": "true"})
    assert preview.status_code == 200 and RETENTION_NOTE in preview.text
    secret = tokens.create_token(actor=personas["operator"], name="t", scope="write", days=1).secret
    api = client.post(
        reverse("api:broker-configs", kwargs={"name": kafka_cluster.name, "broker": "1"}),
        {"changes": [{"name": "log.retention.ms", "op": "DELETE"}], "validate_only": False},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    body = api.json()
    assert (api.status_code, body["ok"], body["confirmed"], body["unconfirmed"]) == (200, True, True, [])
    assert (body["diffs"][0]["new_value"], body["diffs"][0]["applies"]) == (None, RETENTION_NOTE)
    assert described(kafka_cluster, 1, "log.retention.ms") is None


def test_a_describe_caught_half_way_is_not_taken_as_applied():
    # Shapes real Kafka 4.1 answered within ~100 ms of a change (the synonyms ahead of the value).
    def entry(value, source, *synonyms, name="log.cleaner.backoff.ms"):
        return ConfigEntry(name, value, source, False, False, False, synonyms, None, "LONG")

    dyn, default = "DYNAMIC_BROKER_CONFIG", "DEFAULT_CONFIG"
    res = ConfigResource("BROKER", "1")
    backoff = {
        "log.cleaner.backoff.ms": entry(
            "15000", default, ConfigSynonym("log.cleaner.backoff.ms", "15000", default)
        )
    }
    (set_16101,) = config_plan.plan_changes(
        res, backoff, [ConfigChange("log.cleaner.backoff.ms", "SET", "16101")]
    )
    half = entry(
        "15000",
        dyn,
        ConfigSynonym("log.cleaner.backoff.ms", "16101", dyn),
        ConfigSynonym("log.cleaner.backoff.ms", "15000", default),
    )
    done = entry("16101", dyn, *half.synonyms)
    assert (config_plan.reflects(set_16101, half, dyn), config_plan.reflects(set_16101, done, dyn)) == (
        False,
        True,
    )
    hours = ConfigSynonym("log.retention.hours", "168", default)
    was = {
        "log.retention.ms": entry(
            "-5", dyn, ConfigSynonym("log.retention.ms", "-5", dyn), hours, name="log.retention.ms"
        )
    }
    (delete,) = config_plan.plan_changes(res, was, [ConfigChange("log.retention.ms", "DELETE")])
    half = entry("-5", default, name="log.retention.ms")
    done = entry(None, default, name="log.retention.ms")
    assert (config_plan.reflects(delete, half, dyn), config_plan.reflects(delete, done, dyn)) == (False, True)
    unset = {"log.retention.ms": entry(None, default, name="log.retention.ms")}
    (set_5,) = config_plan.plan_changes(res, unset, [ConfigChange("log.retention.ms", "SET", "-5")])
    half = entry(None, dyn, ConfigSynonym("log.retention.ms", "-5", dyn), hours, name="log.retention.ms")
    done = entry("-5", dyn, *half.synonyms, name="log.retention.ms")
    assert (config_plan.reflects(set_5, half, dyn), config_plan.reflects(set_5, done, dyn)) == (False, True)
    # Kafka parses what it stores: "016101" is applied once it reports 16101.
    (padded,) = config_plan.plan_changes(
        res, backoff, [ConfigChange("log.cleaner.backoff.ms", "SET", "016101")]
    )
    stored = entry("16101", dyn, ConfigSynonym("log.cleaner.backoff.ms", "016101", dyn))
    assert config_plan.reflects(padded, stored, dyn)


def test_the_page_warns_when_the_change_is_not_confirmed_yet(
    client, personas, kafka_cluster, sandbox, settings
):
    settings.CONFIG_CONFIRM_TIMEOUT_S = 0.2
    client.force_login(personas["operator"])
    page = reverse("broker_configs", kwargs={"name": kafka_cluster.name, "broker": "3"})
    form = {"op_0": "SET", "key_0": "log.cleaner.backoff.ms", "value_0": "16005", "action": "apply"}
    sandbox.set_broker_config_lag(3)
    try:
        applied = client.post(page, form, follow=True)
    finally:
        sandbox.set_broker_config_lag(0)
    shown = [(m.level_tag, m.message) for m in applied.context["messages"]]
    assert shown == [
        ("success", "Broker 3: 1 config change(s) applied."),
        (
            "warning",
            "Kafka accepted the change, but Kafka did not show log.cleaner.backoff.ms changed within 0.2 s "
            "(brokers apply configs from the metadata log): the audit records the requested value, not yet "
            "confirmed.",
        ),
    ]
    row = AuditEvent.objects.filter(action="config.alter", outcome="success").latest("id")
    assert (row.after, row.outcomes["broker:3"]["confirmed"]) == ({"log.cleaner.backoff.ms": "16005"}, False)
    alter(personas, kafka_cluster, 3, ("log.cleaner.backoff.ms", "DELETE"))
