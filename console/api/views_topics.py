"""API: clusters and topics. Each view calls the area action its page calls."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api import serializers_clusters as sc
from console.api.base import ApiView, paged, plain, query
from console.api.errors import kafka_code, outcome_error, outcome_status
from console.api.held import hold
from console.api.idempotency import idempotent
from console.changes import gate
from console.clusters import actions as clusters
from console.clusters import credentials
from console.clusters.core import SECRETS
from console.configs.plan import looks_secret
from console.topics import actions as topics
from console.topics import batch as topic_batch
from console.topics import delete as deletion
from console.topics import held as topics_held
from console.topics import policy
from console.topics import reads as topic_reads
from console.topics.batch import TopicSpec

ERRORS = {400: s.ErrorBody, 403: s.ErrorBody, 404: s.ErrorBody, 422: s.ErrorBody}


def cluster_json(cluster, user) -> dict:
    """A registry entry as the API shows it: settings and certificates' facts; of a secret only whether
    one is stored."""
    client = credentials.certificate_facts(cluster.client_certificate)
    return {
        "name": cluster.name,
        "description": cluster.description,
        "bootstrap_servers": cluster.bootstrap_servers,
        "bootstrap_controllers": cluster.bootstrap_controllers,
        "security_protocol": cluster.security_protocol,
        "sasl_mechanism": cluster.sasl_mechanism,
        "sasl_username": cluster.sasl_username,
        "ssl_check_hostname": cluster.ssl_check_hostname,
        "tls_min_version": cluster.tls_min_version,
        "ca_certificates": [c.as_json() for c in credentials.certificate_facts(cluster.ca_certificate)],
        "client_certificate": client[0].as_json() if client else None,
        "oauth_token_endpoint": cluster.oauth_token_endpoint,
        "oauth_client_id": cluster.oauth_client_id,
        "oauth_scope": cluster.oauth_scope,
        "oauth_extension_names": [k for k, _ in credentials.parse_extensions(cluster.oauth_extensions)],
        "kerberos_principal": cluster.kerberos_principal,
        "kerberos_service_name": cluster.kerberos_service_name,
        "secrets_stored": {name: cluster.has_secret(name) for name in SECRETS},
        "permissions": sorted(access.permissions(user, cluster)),
    }


class ClusterList(ApiView):
    @extend_schema(operation_id="clusters_list", responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        visible = list(access.visible_clusters(request.user).order_by("name"))
        return Response(paged(visible, request, lambda c: cluster_json(c, request.user)))

    @extend_schema(
        operation_id="clusters_register",
        request=sc.ClusterIn,
        responses={201: sc.ClusterOut, 200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request):
        access.require(request.user, None, access.ADMINISTER)
        data = sc.ClusterIn(data=request.data)
        data.is_valid(raise_exception=True)
        form = sc.cluster_form(data.validated_data)
        if not form.is_valid():
            raise ValidationError([f"{k}: {' '.join(v)}" for k, v in form.errors.items()])
        if data.validated_data.get("test_only"):
            report = clusters.test_settings(
                actor=request.user,
                cluster=None,
                values=form.values(),
                secrets=form.secrets,
                source_ip=self.ip,
            )
            return Response(plain(report))
        cluster = clusters.register_cluster(
            actor=request.user, values=form.values(), secrets=form.secrets, source_ip=self.ip
        )
        return Response(cluster_json(cluster, request.user), status=201)


class ClusterDetail(ApiView):
    @extend_schema(operation_id="clusters_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        data = clusters.overview(actor=request.user, cluster=cluster)
        body = cluster_json(cluster, request.user)
        body["overview"] = {
            "brokers": [plain(b) for b in sorted(data.info.brokers, key=lambda b: b.id)] if data.info else [],
            "active_controller": data.active_controller,
            "error": plain(data.error),
        }
        body["security"] = plain(data.security)  # hostname verification, certificates' expiry and warnings
        return Response(body)


# -- topics ----------------------------------------------------------------------------------------


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


def topic_page(page) -> dict:
    return {
        "count": page.total,
        "page": page.page,
        "pages": page.pages,
        "per_page": page.per_page,
        "cluster_topics": page.cluster_topics,
        "age_s": page.age_s,
        "query_error": page.query_error,
        "results": [topic_item(i) for i in page.items],
    }


def outcome_json(o) -> dict:
    return {**plain(o), "error_code": kafka_code(o.error_name) if o.error_name else None}


def batch_json(result) -> dict:
    return {
        "ok": all(o.ok for o in result.outcomes),
        "validate_only": result.validate_only,
        "event_id": result.event_id,
        "outcomes": [outcome_json(o) for o in result.outcomes],
    }


def batch_response(result, created: int) -> Response:
    """All done: ``created``; one resource that failed: its error's status and error body; else 207."""
    body = batch_json(result)
    if body["ok"]:
        return Response(body, status=200 if result.validate_only else created)
    if len(result.outcomes) == 1:
        o = result.outcomes[0]
        http = outcome_status(o.error_name)
        return Response(
            {**body, "error": outcome_error(http, o.error_name, o.message or o.status)}, status=http
        )
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
    @extend_schema(
        operation_id="topics_list", parameters=[s.TopicListQuery], responses={200: s.TopicPageOut, **ERRORS}
    )
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
        return Response(topic_page(page))

    @extend_schema(
        operation_id="topics_create", request=s.TopicCreateIn, responses={201: s.BatchOut, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        data = s.TopicCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data["validate_only"]:
            spec = spec_of(data.validated_data)
            held = hold(
                self,
                cluster,
                "topic.create",
                lambda: topics_held.prepare_topic_create(request.user, cluster, [spec]),
            )
            if held is not None:
                return held
        result = topics.create_topics(
            actor=request.user,
            cluster=cluster,
            specs=[spec_of(data.validated_data)],
            validate_only=data.validated_data["validate_only"],
            source_ip=self.ip,
        )
        return batch_response(result, 201)


class TopicBatch(ApiView):
    @extend_schema(
        operation_id="topics_batch_create",
        request=s.TopicBatchIn,
        responses={201: s.BatchOut, 207: s.BatchOut, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        data = s.TopicBatchIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        if ("topics" in d) == ("text" in d):
            raise ValidationError(["Send either 'topics' or 'text' (a YAML, JSON or CSV batch)."])
        specs = (
            [spec_of(t) for t in d["topics"]]
            if "topics" in d
            else topic_batch.parse_batch(d["text"], d.get("format"))
        )
        if not specs:
            raise ValidationError(["The batch is empty."])
        if not d["validate_only"]:
            held = hold(
                self,
                cluster,
                "topic.create",
                lambda: topics_held.prepare_topic_create(request.user, cluster, specs),
            )
            if held is not None:
                return held
        result = topics.create_topics(
            actor=request.user,
            cluster=cluster,
            specs=specs,
            validate_only=d["validate_only"],
            source_ip=self.ip,
        )
        return batch_response(result, 201)


class TopicDelete(ApiView):
    @extend_schema(
        operation_id="topics_delete", request=s.TopicDeleteIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        """Without ``confirmation``: what would be deleted and what to type. With it: delete."""
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        data = s.TopicDeleteIn(data=request.data)
        data.is_valid(raise_exception=True)
        names = [n.strip() for n in data.validated_data["names"] if n.strip()]
        if not names:
            raise ValidationError(["Name at least one topic."])
        if "confirmation" not in data.validated_data:
            preview = deletion.delete_preview(actor=request.user, cluster=cluster, names=names)
            return Response(
                {
                    "preview": [{"name": n, "note": note} for n, note in preview],
                    "confirmation": deletion.delete_confirmation(names),
                }
            )
        if gate.required(request.user, cluster, "topic.delete") is not None:
            if data.validated_data["confirmation"].strip() != deletion.delete_confirmation(names):
                raise deletion.ConfirmationError("The confirmation does not match; nothing was submitted.")
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
            confirmation=data.validated_data["confirmation"],
            source_ip=self.ip,
        )
        return batch_response(result, 200)


class TopicDetail(ApiView):
    @extend_schema(operation_id="topics_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
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
                "configs": [_config_entry(e) for e in d.configs],
                "configs_error": plain(d.configs_error),
                "offsets_error": plain(d.offsets_error),
                "size_bytes": d.size.bytes if d.size is not None else None,
            }
        )


def _config_entry(e) -> dict:
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
    @extend_schema(
        operation_id="topics_partitions_create",
        request=s.PartitionsIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str, topic: str):
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        data = s.PartitionsIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
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
        body = {**outcome_json(outcome), "validate_only": d["validate_only"]}
        if outcome.ok:
            return Response(body)
        http = outcome_status(outcome.error_name)
        error = outcome_error(http, outcome.error_name, outcome.message or outcome.status)
        return Response({**body, "error": error}, status=http)
