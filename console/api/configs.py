"""API: topic and broker configs (describe, incremental alter with validate-only)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, plain, reads, writes
from console.api.errors import kafka_error, kafka_status, outcome_error
from console.api.held import hold
from console.configs import actions as configs
from console.configs import held as configs_held
from console.configs.plan import looks_secret
from console.kafka import ConfigChange


def _alter(view: ApiView, cluster, resource) -> Response:
    user = view.request.user
    access.require(user, cluster, access.MANAGE_CONFIGS)
    d = view.body(s.ConfigAlterIn)
    changes = []
    for c in d["changes"]:
        value = c.get("value")
        if c["op"] in ("APPEND", "SUBTRACT") and not (value or "").strip():
            raise ValidationError([f"{c['name']}: {c['op'].lower()} needs a value."])
        changes.append(
            ConfigChange(c["name"].strip(), c["op"], None if c["op"] == "DELETE" else (value or ""))
        )
    if not d["validate_only"]:
        held = hold(
            view,
            cluster,
            configs_held.gate_kind(resource.type),
            lambda: configs_held.prepare_config(user, cluster, resource, changes),
        )
        if held is not None:
            return held
    result = configs.alter_configs(
        actor=user,
        cluster=cluster,
        resource=resource,
        changes=changes,
        validate_only=d["validate_only"],
        source_ip=view.ip,
    )
    body = {
        "ok": result.ok,
        "validate_only": result.validate_only,
        "resource": plain(result.resource),
        "diffs": [_diff(d) for d in result.diffs],
        "message": result.message,
        "event_id": result.event_id,
        "confirmed": result.confirmed,
        "unconfirmed": list(result.unconfirmed),
    }
    if result.ok:
        return Response(body)
    if result.error is None:
        return Response({**body, "error": outcome_error(422, "", result.message)}, status=422)
    http = kafka_status(result.error)
    error = {"status": http, "code": "kafka_error", "message": result.error.operator_text}
    return Response({**body, "error": {**error, "kafka": kafka_error(result.error)}}, status=http)


def _diff(d) -> dict:
    """One change; a secret's values are never sent back (as on the pages)."""
    hidden = d.sensitive or looks_secret(d.name)
    return {
        "name": d.name,
        "op": d.op,
        "old_value": None if hidden else d.old_value,
        "new_value": None if hidden else d.new_value,
        "old_source": d.old_source,
        "new_source": d.new_source,
        "applies": d.applies_note,
        "sensitive": hidden,
    }


def _describe(request, cluster, resource) -> Response:
    overrides = request.query_params.get("overrides_only", "") in ("1", "true", "on")
    v = configs.describe_configs(
        actor=request.user, cluster=cluster, resource=resource, overrides_only=overrides
    )
    return Response({"resource": plain(v.resource), "configs": [plain(r) for r in v.shown]})


class TopicConfigs(ApiView):
    @reads("topics_configs_retrieve")
    def get(self, request, name: str, topic: str):
        return _describe(request, self.cluster(name), configs.topic_resource(topic))

    @writes("topics_configs_alter", request=s.ConfigAlterIn, held=True)
    def post(self, request, name: str, topic: str):
        return _alter(self, self.cluster(name), configs.topic_resource(topic))


class BrokerConfigs(ApiView):
    """A broker's configs; broker ``-`` is the cluster-wide default."""

    @reads("brokers_configs_retrieve")
    def get(self, request, name: str, broker: str):
        return _describe(
            request, self.cluster(name), configs.broker_resource("" if broker == "-" else broker)
        )

    @writes("brokers_configs_alter", request=s.ConfigAlterIn, held=True)
    def post(self, request, name: str, broker: str):
        resource = configs.broker_resource("" if broker == "-" else broker)
        return _alter(self, self.cluster(name), resource)
