"""API: topics (list, create one or a batch, show, add partitions, delete with its confirmation) and the
cluster's topic policy. Each view calls the area action its page calls."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, form_data, page_json, plain, query, reads, writes
from console.api.errors import kafka_code, outcome_error, outcome_status
from console.api.held import hold
from console.changes import gate
from console.configs.plan import looks_secret
from console.forms.topics import TopicPolicyForm
from console.topics import actions as topics
from console.topics import batch as topic_batch
from console.topics import confirm, policy
from console.topics import delete as deletion
from console.topics import held as topics_held
from console.topics import reads as topic_reads
from console.topics.batch import TopicSpec


def topic_item(item) -> dict:
    r = item.row
    return {
        "name": r.name,
        "partitions": r.partitions,
        "replication_factor": r.replication_factor,
        "under_replicated": r.under_replicated,
        "offline": r.offline,
        "internal": r.internal,
        "cleanup_policy": item.cleanup_policy,
        "retention_ms": item.retention_ms,
        "under_min_isr": item.under_min_isr,
        "size_bytes": item.size_bytes,
    }


def outcome_json(o) -> dict:
    return {**plain(o), "error_code": kafka_code(o.error_name) if o.error_name else None}


def outcome_response(body: dict, o, ok_status: int = 200) -> Response:
    """One resource's answer: ``ok_status``, or its error's status with the error body."""
    if o.ok:
        return Response(body, status=ok_status)
    http = outcome_status(o.error_name)
    return Response({**body, "error": outcome_error(http, o.error_name, o.message or o.status)}, status=http)


def batch_response(result, created: int) -> Response:
    """All done: ``created``; one resource that failed: its error's status and error body; else 207."""
    body = {
        "ok": all(o.ok for o in result.outcomes),
        "validate_only": result.validate_only,
        "event_id": result.event_id,
        "outcomes": [outcome_json(o) for o in result.outcomes],
    }
    if body["ok"]:
        return Response(body, status=200 if result.validate_only else created)
    if len(result.outcomes) == 1:
        return outcome_response(body, result.outcomes[0])
    return Response(body, status=207)


def spec_of(data: dict) -> TopicSpec:
    errors = policy.topic_name_errors(data["name"])
    assignment = data.get("assignment")
    if assignment and (data.get("partitions") or data.get("replication_factor")):
        errors.append("Give either an assignment or partitions and replication factor, not both.")
    if errors:
        raise ValidationError(errors)
    return TopicSpec(
        data["name"],
        -1 if assignment else data.get("partitions") or -1,
        -1 if assignment else data.get("replication_factor") or -1,
        tuple(tuple(r) for r in assignment) if assignment else None,
        dict(data.get("configs") or {}),
    )


class TopicList(ApiView):
    @reads("topics_list", {200: s.TopicPageOut}, parameters=[s.TopicListQuery])
    def get(self, request, name: str):
        cluster = self.cluster(name)
        q = query(s.TopicListQuery, request)
        page = topic_reads.list_topics(
            actor=request.user,
            cluster=cluster,
            query=q["q"],
            regex=q["regex"],
            include_internal=q["internal"],
            unhealthy_only=q["unhealthy"],
            sort=q["sort"],
            descending=q["desc"],
            page=q["page"],
            per_page=q["per_page"],
            refresh=q["refresh"],
        )
        more = {"cluster_topics": page.cluster_topics, "age_s": page.age_s, "query_error": page.query_error}
        return Response(page_json(page, [topic_item(i) for i in page.items], **more))

    @writes("topics_create", {200: s.BatchOut, 201: s.BatchOut}, request=s.TopicCreateIn, held=True)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        d = self.body(s.TopicCreateIn)
        spec = spec_of(d)
        if d.get("like"):
            spec = topic_reads.settings_of(actor=request.user, cluster=cluster, name=d["like"]).spec_for(spec)
        return _create(self, cluster, [spec], d["validate_only"])


class TopicBatch(ApiView):
    @writes(
        "topics_batch_create",
        {200: s.BatchOut, 201: s.BatchOut, 207: s.BatchOut},
        request=s.TopicBatchIn,
        held=True,
    )
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        d = self.body(s.TopicBatchIn)
        if ("topics" in d) == ("text" in d):
            raise ValidationError(["Send either 'topics' or 'text' (a YAML, JSON or CSV batch)."])
        specs = (
            [spec_of(t) for t in d["topics"]]
            if "topics" in d
            else topic_batch.parse_batch(d["text"], d.get("format"))
        )
        if not specs:
            raise ValidationError(["The batch is empty."])
        return _create(self, cluster, specs, d["validate_only"])


def _create(view: ApiView, cluster, specs: list[TopicSpec], validate_only: bool) -> Response:
    """Create topics (or only validate them), held for review where the cluster holds creation."""
    user = view.request.user
    if not validate_only:
        held = hold(
            view, cluster, "topic.create", lambda: topics_held.prepare_topic_create(user, cluster, specs)
        )
        if held is not None:
            return held
    result = topics.create_topics(
        actor=user, cluster=cluster, specs=specs, validate_only=validate_only, source_ip=view.ip
    )
    return batch_response(result, 201)


class TopicDelete(ApiView):
    @writes("topics_delete", (200, 207), request=s.TopicDeleteIn, held=True)
    def post(self, request, name: str):
        """Without ``confirmation``: what would be deleted and what to type. With it: delete."""
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        d = self.body(s.TopicDeleteIn)
        names = [n.strip() for n in d["names"] if n.strip()]
        if not names:
            raise ValidationError(["Name at least one topic."])
        if "confirmation" not in d:
            preview = deletion.delete_preview(actor=request.user, cluster=cluster, names=names)
            return Response(
                {
                    "preview": [{"name": n, "note": note} for n, note in preview],
                    "confirmation": deletion.delete_confirmation(names),
                }
            )
        if gate.required(request.user, cluster, "topic.delete") is not None:
            confirm.check_held_delete(names, d["confirmation"])
            return hold(
                self,
                cluster,
                "topic.delete",
                lambda: topics_held.prepare_topic_delete(request.user, cluster, names),
            )
        result = deletion.delete_topics(
            actor=request.user,
            cluster=cluster,
            names=names,
            confirmation=d["confirmation"],
            source_ip=self.ip,
        )
        return batch_response(result, 200)


class TopicDetail(ApiView):
    @reads("topics_retrieve")
    def get(self, request, name: str, topic: str):
        cluster = self.cluster(name)
        d = topic_reads.describe_topic(actor=request.user, cluster=cluster, name=topic)
        return Response(
            {
                "name": d.name,
                "topic_id": d.topic_id,
                "internal": d.internal,
                "partitions": [
                    {**plain(p), "under_replicated": p.under_replicated, "messages": p.messages}
                    for p in d.partitions
                ],
                "configs": [config_entry(e) for e in d.configs],
                "configs_error": plain(d.configs_error),
                "offsets_error": plain(d.offsets_error),
                "size_bytes": d.size.bytes if d.size is not None else None,
            }
        )


def config_entry(e) -> dict:
    """A config as the topic page lists it: no synonyms, and a secret's value never (KIP-133)."""
    hidden = e.sensitive or looks_secret(e.name)
    return {
        "name": e.name,
        "value": None if hidden else e.value,
        "source": e.source,
        "read_only": e.read_only,
        "sensitive": hidden,
        "default": e.default,
    }


class TopicPartitions(ApiView):
    @writes("topics_partitions_create", request=s.PartitionsIn, held=True)
    def post(self, request, name: str, topic: str):
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        d = self.body(s.PartitionsIn)
        if not d["validate_only"]:
            held = hold(
                self, cluster, "topic.partitions",
                lambda: topics_held.prepare_partitions(request.user, cluster, topic, d["total_count"], d.get("assignment")),
            )  # fmt: skip
            if held is not None:
                return held
        outcome = topics.add_partitions(
            actor=request.user,
            cluster=cluster,
            topic=topic,
            total_count=d["total_count"],
            assignment=d.get("assignment"),
            validate_only=d["validate_only"],
            source_ip=self.ip,
        )
        return outcome_response({**outcome_json(outcome), "validate_only": d["validate_only"]}, outcome)


class TopicPolicy(ApiView):
    @reads("topics_policy_retrieve")
    def get(self, request, name: str):
        return Response(plain(policy.rules_for(self.cluster(name))))

    @writes("topics_policy_update", request=s.TopicPolicyIn)
    def post(self, request, name: str):
        """Replace the cluster's topic policy (cluster admins); fields left out become unrestricted."""
        cluster = self.cluster(name, access.ADMINISTER)
        fields = {k: "" if v is None else v for k, v in self.body(s.TopicPolicyIn).items()}
        values = form_data(TopicPolicyForm(fields))
        policy.update_topic_policy(actor=request.user, cluster=cluster, values=values, source_ip=self.ip)
        return Response(plain(policy.rules_for(cluster)))
