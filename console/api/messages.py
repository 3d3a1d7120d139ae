"""API: a topic's messages (browse, produce) and a cluster's data access (grants of ``data.read`` /
``data.write``, masking rules) — the same area calls as the message browser's pages and
``manage.py kafka messages``: one permission check, the masking applied on the server, every read and
write audited by the area."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.utils.cache import add_never_cache_headers
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, plain, query, reads, writes
from console.messages import actions, core, store
from console.messages import reads as message_reads
from console.models.messages import MaskKind

FILTER_MAX = core.MAX_FILTER
KINDS = "null, json, text, hex or schema (the Confluent wire format: the schema id and the payload in hex)"


class MessagesQuery(serializers.Serializer):
    mode = serializers.ChoiceField(choices=core.MODES, default="newest")
    partition = serializers.IntegerField(min_value=0, required=False, help_text="every partition if left out")
    offset = serializers.IntegerField(min_value=0, required=False, help_text="mode offset")
    timestamp = serializers.IntegerField(min_value=0, required=False, help_text="mode timestamp: epoch ms")
    count = serializers.IntegerField(min_value=1, max_value=core.MAX_MESSAGES, default=50)
    cursor = serializers.CharField(
        required=False, allow_blank=True, max_length=4000, default="",
        help_text="mode follow: the previous answer's cursor as PARTITION:OFFSET,… (0:15,1:20)",
    )  # fmt: skip
    key_contains = serializers.CharField(required=False, allow_blank=True, max_length=FILTER_MAX, default="")
    header = serializers.CharField(
        required=False, allow_blank=True, max_length=FILTER_MAX, default="", help_text="NAME or NAME=VALUE"
    )
    value_contains = serializers.CharField(
        required=False, allow_blank=True, max_length=FILTER_MAX, default=""
    )
    json_path = serializers.CharField(
        required=False, allow_blank=True, max_length=FILTER_MAX, default="", help_text="$.a.b or $.a.b=VALUE"
    )
    decode = serializers.ChoiceField(choices=core.DECODES, default="auto")
    unmasked_reason = serializers.CharField(
        required=False, allow_blank=True, max_length=core.MAX_REASON, default="",
        help_text="ask for an unmasked read (needs a grant that allows it); audited with the read",
    )  # fmt: skip

    def validate_cursor(self, value: str) -> dict[int, int] | None:
        try:
            return core.parse_cursor(value)  # the page's format: one cursor for every door
        except ValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None


class HeaderIn(serializers.Serializer):
    name = serializers.CharField(max_length=FILTER_MAX)
    value = serializers.CharField(
        allow_null=True, allow_blank=True, required=False, default=None, trim_whitespace=False
    )


class ProduceIn(serializers.Serializer):
    partition = serializers.IntegerField(
        min_value=0,
        required=False,
        allow_null=True,
        default=None,
        help_text="Kafka's partitioner if left out",
    )
    # a message is sent as written: no whitespace trimmed
    key = serializers.CharField(
        allow_null=True, allow_blank=True, required=False, default=None, trim_whitespace=False
    )
    value = serializers.CharField(
        allow_null=True, allow_blank=True, required=False, default=None, trim_whitespace=False
    )
    headers = HeaderIn(many=True, required=False, default=list)


class MessageOut(serializers.Serializer):
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    timestamp = serializers.IntegerField(allow_null=True, help_text="epoch ms; null: the record has none")
    timestamp_type = serializers.ChoiceField(choices=["CreateTime", "LogAppendTime"])
    key = serializers.CharField()
    key_kind = serializers.CharField(help_text=KINDS)
    value = serializers.CharField(
        help_text="as decoded (JSON pretty-printed), masked unless an unmasked read"
    )
    value_kind = serializers.CharField(help_text=KINDS)
    schema_id = serializers.IntegerField(allow_null=True, help_text="the Confluent wire format's schema id")
    headers = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    size = serializers.IntegerField(help_text="bytes of key, value and headers")
    masked_by = serializers.ListField(child=serializers.CharField(), help_text="the rules that changed it")


class BrowseOut(serializers.Serializer):
    messages = MessageOut(many=True)
    masked = serializers.BooleanField()
    rules = serializers.ListField(child=serializers.CharField(), help_text="the masking rules in force")
    cursor = serializers.DictField(
        child=serializers.IntegerField(), help_text="{partition: next offset}: where mode=follow continues"
    )
    stopped = serializers.CharField(help_text="why the read stopped before count ('' if it did not)")
    scanned = serializers.IntegerField(help_text="records read (filters may show fewer)")


class ProducedOut(serializers.Serializer):
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    timestamp = serializers.IntegerField(allow_null=True)


def browse_query(q: dict) -> core.BrowseQuery:
    """The validated query string as the area's BrowseQuery."""
    return core.BrowseQuery(
        mode=q["mode"],
        partition=q.get("partition"),
        offset=q.get("offset"),
        timestamp_ms=q.get("timestamp"),
        count=q["count"],
        cursor=q["cursor"],
        key_contains=q["key_contains"],
        header=q["header"],
        value_contains=q["value_contains"],
        json_path=q["json_path"],
        decode=q["decode"],
        unmasked_reason=q["unmasked_reason"],
    )


def _text(value: str | None) -> bytes | None:
    return None if value is None else value.encode()


class TopicMessages(ApiView):
    @reads("messages_browse", {200: BrowseOut}, parameters=[MessagesQuery])
    def get(self, request, name: str, topic: str):
        cluster = self.cluster(name)
        result = message_reads.browse(
            actor=request.user,
            cluster=cluster,
            topic=topic,
            query=browse_query(query(MessagesQuery, request)),
            source_ip=self.ip,
        )
        response = Response(plain(result))
        add_never_cache_headers(response)  # messages are data: no cache keeps a copy
        return response

    @writes("messages_produce", {201: ProducedOut}, request=ProduceIn)
    def post(self, request, name: str, topic: str):
        cluster = self.cluster(name)
        d = self.body(ProduceIn)
        produced = actions.produce(
            actor=request.user,
            cluster=cluster,
            topic=topic,
            partition=d["partition"],
            key=_text(d["key"]),
            value=_text(d["value"]),
            headers=[(h["name"], _text(h["value"])) for h in d["headers"]],
            source_ip=self.ip,
        )
        return Response(
            {"partition": produced.partition, "offset": produced.offset, "timestamp": produced.timestamp},
            status=201,
        )


# -- data access: grants and masking rules (cluster admins) -------------------------------------------


class DataGrantIn(serializers.Serializer):
    user = serializers.CharField(required=False, allow_blank=True, max_length=150, default="")
    group = serializers.CharField(required=False, allow_blank=True, max_length=150, default="")
    prefix = serializers.CharField(
        required=False, allow_blank=True, max_length=249, default="", help_text="topic-name prefix; '' = all"
    )
    read = serializers.BooleanField(default=True)
    write = serializers.BooleanField(default=False)
    unmasked = serializers.BooleanField(default=False, help_text="may ask for unmasked reads with a reason")


class MaskingRuleIn(serializers.Serializer):
    prefix = serializers.CharField(required=False, allow_blank=True, max_length=249, default="")
    kind = serializers.ChoiceField(choices=MaskKind.values)
    expression = serializers.CharField(max_length=500)
    note = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")


class DataGrants(ApiView):
    @reads("data_grants_list")
    def get(self, request, name: str):
        listed, _ = message_reads.data_access(actor=request.user, cluster=self.cluster(name))
        return Response({"results": listed})

    @writes("data_grants_add", 201, request=DataGrantIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(DataGrantIn)
        user = get_user_model().objects.filter(username=d["user"]).first() if d["user"] else None
        group = Group.objects.filter(name=d["group"]).first() if d["group"] else None
        if (d["user"] and user is None) or (d["group"] and group is None):
            raise ValidationError(["No such user or group."])
        grant = actions.grant(
            actor=request.user, cluster=cluster, user=user, group=group, prefix=d["prefix"],
            read=d["read"], write=d["write"], unmasked=d["unmasked"], source_ip=self.ip,
        )  # fmt: skip
        return Response(store.describe_grant(grant), status=201)


class DataGrantRevoke(ApiView):
    @writes("data_grants_revoke", request=None)
    def post(self, request, name: str, grant_id: int):
        cluster = self.cluster(name, access.ADMINISTER)
        row = cluster.data_grants.select_related("user", "group").filter(pk=grant_id).first()
        actions.revoke(
            actor=request.user, cluster=cluster, grant_id=grant_id, source_ip=self.ip
        )  # 404 if none
        return Response({"revoked": store.describe_grant(row)})


class MaskingRules(ApiView):
    @reads("masking_rules_list")
    def get(self, request, name: str):
        _, listed = message_reads.data_access(actor=request.user, cluster=self.cluster(name))
        return Response({"results": listed})

    @writes("masking_rules_add", 201, request=MaskingRuleIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(MaskingRuleIn)
        rule = actions.add_rule(
            actor=request.user, cluster=cluster, prefix=d["prefix"], kind=d["kind"],
            expression=d["expression"], note=d["note"], source_ip=self.ip,
        )  # fmt: skip
        return Response(store.describe_rule(rule), status=201)


class MaskingRuleRemove(ApiView):
    @writes("masking_rules_remove", request=None)
    def post(self, request, name: str, rule_id: int):
        cluster = self.cluster(name, access.ADMINISTER)
        row = cluster.masking_rules.filter(pk=rule_id).first()
        actions.remove_rule(
            actor=request.user, cluster=cluster, rule_id=rule_id, source_ip=self.ip
        )  # 404 if none
        return Response({"removed": store.describe_rule(row)})
