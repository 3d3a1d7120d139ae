"""Request and response shapes of the API. They describe and type-check; the area actions decide."""

from __future__ import annotations

from rest_framework import serializers

from console.topics.reads import SORT_KEYS

INT32 = 2**31 - 1  # partition numbers and broker ids are int32 in Kafka's protocol


def _assignment(**kwargs) -> serializers.ListField:
    """Replicas per partition, in partition order (broker ids, the preferred leader first)."""
    return serializers.ListField(
        child=serializers.ListField(
            child=serializers.IntegerField(min_value=0, max_value=INT32), min_length=1
        ),
        required=False,
        **kwargs,
    )


class HeldIn(serializers.Serializer):
    """On a cluster whose change-control policy holds the action: it is submitted for approval with
    its dry run (202, the held change), or run at once with ``break_glass`` (admins)."""

    reason = serializers.CharField(
        required=False, allow_blank=True, max_length=2000, help_text="why (shown to the approvers)"
    )
    break_glass = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=2000,
        help_text="a written justification: an admin runs a held action now (audited, announced)",
    )


class HeldOut(serializers.Serializer):
    """A held change (console/api/held.py): 202 when submitted for review; with ``break_glass``, 200 when
    it ran and 207 when it failed."""

    held = serializers.BooleanField()
    id = serializers.IntegerField()
    kind = serializers.CharField()
    resource = serializers.CharField()
    state = serializers.CharField()
    payload_sha256 = serializers.CharField()
    approvals_required = serializers.IntegerField()
    approvals = serializers.ListField(child=serializers.CharField())
    review = serializers.JSONField()
    result = serializers.JSONField(allow_null=True)
    run_at = serializers.DateTimeField(allow_null=True)
    schedule_state = serializers.CharField(allow_null=True)
    request = serializers.CharField(help_text="the request's address in the API")


class Fail(serializers.Serializer):
    status = serializers.IntegerField()
    code = serializers.CharField()
    message = serializers.CharField()


class ErrorBody(serializers.Serializer):
    error = Fail()


# -- topics ----------------------------------------------------------------------------------------


class TopicListQuery(serializers.Serializer):
    q = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")
    regex = serializers.BooleanField(required=False, default=False)
    internal = serializers.BooleanField(required=False, default=False)
    unhealthy = serializers.BooleanField(required=False, default=False)
    sort = serializers.ChoiceField(choices=SORT_KEYS, required=False, default="name")
    desc = serializers.BooleanField(required=False, default=False)
    page = serializers.IntegerField(required=False, min_value=1, max_value=10**9, default=1)
    per_page = serializers.IntegerField(required=False, min_value=1, max_value=500, default=50)
    refresh = serializers.BooleanField(required=False, default=False)


class TopicItem(serializers.Serializer):
    name = serializers.CharField()
    partitions = serializers.IntegerField()
    replication_factor = serializers.IntegerField()
    under_replicated = serializers.IntegerField()
    offline = serializers.IntegerField()
    internal = serializers.BooleanField()
    cleanup_policy = serializers.CharField(allow_null=True)
    retention_ms = serializers.CharField(allow_null=True)
    under_min_isr = serializers.IntegerField(allow_null=True)
    size_bytes = serializers.IntegerField(allow_null=True)


class TopicPageOut(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    per_page = serializers.IntegerField()
    cluster_topics = serializers.IntegerField()
    age_s = serializers.FloatField()
    query_error = serializers.CharField()
    results = TopicItem(many=True)


class TopicSpecIn(serializers.Serializer):
    name = serializers.CharField(max_length=249)
    partitions = serializers.IntegerField(required=False, min_value=1, max_value=1_000_000)
    replication_factor = serializers.IntegerField(required=False, min_value=1, max_value=32767)
    assignment = _assignment(min_length=1)
    configs = serializers.DictField(
        child=serializers.CharField(allow_blank=True), required=False, default=dict
    )


class TopicCreateIn(TopicSpecIn, HeldIn):
    validate_only = serializers.BooleanField(required=False, default=False)
    like = serializers.CharField(
        required=False,
        max_length=249,
        help_text="an existing topic: its partition count, replication factor and the configs set on it "
        "fill in what this body leaves out",
    )


class TopicBatchIn(HeldIn):
    topics = TopicSpecIn(many=True, required=False)
    text = serializers.CharField(
        required=False, help_text="A YAML, JSON or CSV batch, as the batch page takes"
    )
    format = serializers.ChoiceField(choices=("yaml", "json", "csv"), required=False)
    validate_only = serializers.BooleanField(required=False, default=False)


class TopicOutcomeOut(serializers.Serializer):
    name = serializers.CharField()
    ok = serializers.BooleanField()
    status = serializers.CharField()
    message = serializers.CharField()
    error_name = serializers.CharField()
    error_code = serializers.IntegerField(allow_null=True, help_text="Kafka's numeric code of error_name")
    warning = serializers.CharField()


class BatchOut(serializers.Serializer):
    """Per-topic results; a failed single topic also carries the ``error`` body of its status."""

    ok = serializers.BooleanField()
    validate_only = serializers.BooleanField()
    event_id = serializers.IntegerField(allow_null=True)
    outcomes = TopicOutcomeOut(many=True)


class TopicDeleteIn(HeldIn):
    names = serializers.ListField(child=serializers.CharField(max_length=249), min_length=1, max_length=5000)
    confirmation = serializers.CharField(
        required=False, allow_blank=True, help_text="Without it: the preview and the confirmation to type"
    )


class PartitionsIn(HeldIn):
    total_count = serializers.IntegerField(min_value=1, max_value=1_000_000)
    assignment = _assignment()
    validate_only = serializers.BooleanField(required=False, default=False)


# -- configs ---------------------------------------------------------------------------------------


class ConfigChangeIn(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    op = serializers.ChoiceField(choices=("SET", "DELETE", "APPEND", "SUBTRACT"), default="SET")
    value = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=10_000)


class ConfigAlterIn(HeldIn):
    changes = ConfigChangeIn(many=True, min_length=1, max_length=200)
    validate_only = serializers.BooleanField(required=False, default=False)


# -- ACLs ------------------------------------------------------------------------------------------


class AclBindingIn(serializers.Serializer):
    resource_type = serializers.CharField()
    resource_name = serializers.CharField()
    pattern_type = serializers.CharField(default="LITERAL")
    principal = serializers.CharField()
    host = serializers.CharField(default="*")
    operation = serializers.CharField()
    permission = serializers.CharField(default="ALLOW")


class AclListQuery(serializers.Serializer):
    group_by = serializers.ChoiceField(choices=("principal", "resource"), required=False)
    page = serializers.IntegerField(required=False, min_value=1)


# a filter: the binding's fields, each optional (blank or left out matches any)
AclFilterIn = type(
    "AclFilterIn",
    (serializers.Serializer,),
    {f: serializers.CharField(required=False, allow_blank=True) for f in AclBindingIn().fields},
)


class AclChangeIn(HeldIn):
    creates = AclBindingIn(many=True, required=False, default=list)
    deletes = AclBindingIn(many=True, required=False, default=list)


class AclDeleteIn(HeldIn):
    filters = AclFilterIn(many=True, min_length=1, max_length=100)
    dry_run = serializers.BooleanField(
        default=True, help_text="true: only list the bindings the filters match"
    )


# -- consumer groups -------------------------------------------------------------------------------


class GroupListQuery(serializers.Serializer):
    """The groups list's query (as the groups page's search form)."""

    q = serializers.CharField(required=False)
    regex = serializers.BooleanField(required=False)
    state = serializers.CharField(required=False)
    topic = serializers.CharField(required=False)
    lagging = serializers.BooleanField(required=False)
    sort = serializers.CharField(required=False)
    desc = serializers.BooleanField(required=False)
    page = serializers.IntegerField(required=False, min_value=1)
    per_page = serializers.IntegerField(required=False, min_value=1, max_value=500)


class ResetIn(HeldIn):
    mode = serializers.ChoiceField(
        choices=("to-earliest", "to-latest", "to-datetime", "to-offset", "shift-by", "from-file")
    )
    scope = serializers.ChoiceField(choices=("all-topics", "topic", "partitions"), default="all-topics")
    topic = serializers.CharField(required=False, allow_blank=True, default="")
    partitions = serializers.CharField(required=False, allow_blank=True, default="", help_text="e.g. 0,2,5-7")
    timestamp = serializers.CharField(required=False, allow_blank=True, default="")
    offset = serializers.IntegerField(required=False, allow_null=True)
    shift = serializers.IntegerField(required=False, allow_null=True)
    file_text = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="kafka-consumer-groups CSV"
    )
    dry_run = serializers.BooleanField(default=True)
    confirmation = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="the group id, to execute"
    )


class ConfirmIn(HeldIn):  # a group delete: held like an offset reset (console/groups/delete.py)
    confirmation = serializers.CharField(allow_blank=True, max_length=300)


class OffsetsDeleteIn(ConfirmIn):
    topic = serializers.CharField(max_length=300)


# -- reassignments and elections -------------------------------------------------------------------


class ReassignIn(HeldIn):
    intent = serializers.ChoiceField(choices=("json", "balance", "move_off", "spread", "rf"), default="json")
    plan = serializers.JSONField(
        required=False,
        help_text="kafka-reassign-partitions' JSON: {version: 1, partitions: [{topic, partition, replicas}]}",
    )
    topics = serializers.ListField(child=serializers.CharField(max_length=249), required=False, default=list)
    brokers = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=INT32), required=False, default=list
    )
    replication_factor = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=32)
    throttle_bytes_per_s = serializers.IntegerField(required=False, allow_null=True, min_value=0)
    elect_preferred = serializers.BooleanField(default=False)
    dry_run = serializers.BooleanField(default=True, help_text="true: validate and preview only")
    plan_sha256 = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=64,
        help_text="the dry run's digest: Start is refused unless it runs exactly that plan. An intent's "
        "Start needs it, with the dry run's plan in `plan`",
    )


class ReassignmentOut(serializers.Serializer):
    id = serializers.IntegerField()
    operation_id = serializers.IntegerField()
    state = serializers.CharField()
    stage = serializers.CharField()
    partitions_total = serializers.IntegerField()
    bytes_total = serializers.IntegerField()
    bytes_done = serializers.IntegerField()
    throttle_bytes_per_s = serializers.IntegerField(allow_null=True)


class ThrottleIn(HeldIn):
    throttle_bytes_per_s = serializers.IntegerField(min_value=0)


class PartitionRef(serializers.Serializer):
    topic = serializers.CharField(max_length=249)
    partition = serializers.IntegerField(min_value=0, max_value=INT32)


class ExternalCancelIn(serializers.Serializer):
    partitions = PartitionRef(many=True, min_length=1, max_length=10_000)


class ThrottleCleanupIn(serializers.Serializer):
    keys = serializers.ListField(child=serializers.CharField(max_length=600), min_length=1)


class ElectionIn(HeldIn):
    election_type = serializers.ChoiceField(choices=("PREFERRED", "UNCLEAN"), default="PREFERRED")
    partitions = PartitionRef(
        many=True,
        required=False,
        help_text="omitted: every partition not led by its preferred replica (PREFERRED)",
    )
    confirmation = serializers.CharField(required=False, allow_blank=True, default="")


# -- requests, audit, capacity ---------------------------------------------------------------------


class RequestIn(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=(
            "topic.create",
            "topic.config",
            "topic.partitions",
            "topic.delete",
            "acl.create",
            "group.offsets.reset",
        )
    )
    payload = serializers.DictField(help_text="the kind's fields, as stored on the request (see docs/api.md)")
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class DecisionIn(serializers.Serializer):
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class CapacityRunIn(serializers.Serializer):
    days = serializers.IntegerField(min_value=1, max_value=365, required=False)


# -- cluster administration ------------------------------------------------------------------------


class GrantIn(serializers.Serializer):
    user = serializers.CharField(required=False, allow_blank=True, help_text="a user name, or")
    group = serializers.CharField(required=False, allow_blank=True, help_text="a group name")
    role = serializers.ChoiceField(choices=("viewer", "requester", "operator", "admin", "auditor"))
    namespaces = serializers.ListField(
        child=serializers.CharField(max_length=249), required=False, default=list
    )
    principals = serializers.ListField(
        child=serializers.CharField(max_length=500), required=False, default=list
    )


class TopicPolicyIn(serializers.Serializer):
    """The topic policy page's fields (blank = unrestricted)."""

    max_partitions = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    allowed_replication_factors = serializers.CharField(
        required=False, allow_blank=True, help_text="e.g. 2, 3"
    )
    allowed_config_keys = serializers.CharField(required=False, allow_blank=True)
    config_ranges = serializers.CharField(required=False, allow_blank=True, help_text="JSON, as on the page")
    name_pattern = serializers.CharField(required=False, allow_blank=True, max_length=500)
    protected_topics = serializers.CharField(required=False, allow_blank=True)
    max_batch_size = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    namespace_rules = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text='JSON, as on the page: {"<prefix>": {"required": [keys], "defaults": {key: value}}}',
    )


class AutoApproveIn(serializers.Serializer):
    enabled = serializers.BooleanField(default=False)
    kinds = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    max_partitions = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=1_000_000
    )


class LogLevelsIn(serializers.Serializer):
    levels = serializers.DictField(child=serializers.CharField(), help_text="logger -> level (or RESET)")
    dry_run = serializers.BooleanField(default=True)
