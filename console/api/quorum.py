"""API: the KRaft quorum and one controller (its facts; setting its log levels), and the KRaft lifecycle:
feature levels (Kafka's validate-only as the dry run), controller voters added and removed (KIP-853),
a stopped broker unregistered; admins only, held where change control holds the ``kraft.*`` kinds."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, plain, reads, writes
from console.api.held import hold
from console.quorum import actions as quorum
from console.quorum import controllers, core, features, held, unregister, voters


class Quorum(ApiView):
    @reads("quorum_retrieve")
    def get(self, request, name: str):
        return Response(plain(quorum.describe_quorum(actor=request.user, cluster=self.cluster(name))))


class Controller(ApiView):
    @reads("quorum_controller_retrieve")
    def get(self, request, name: str, node_id: int):
        cluster = self.cluster(name, needs="controllers")
        return Response(
            plain(controllers.describe_controller(actor=request.user, cluster=cluster, node_id=node_id))
        )

    @writes("quorum_controller_log_levels", (200, 207), request=s.LogLevelsIn)
    def post(self, request, name: str, node_id: int):
        """Set (or RESET) log levels on one controller; ``dry_run`` (the default) only validates."""
        cluster = self.cluster(name, access.MANAGE_CONFIGS, needs="controllers")
        d = self.body(s.LogLevelsIn)
        result = controllers.change_log_levels(
            actor=request.user,
            cluster=cluster,
            node_id=node_id,
            levels=dict(d["levels"]),
            dry_run=d["dry_run"],
            source_ip=self.ip,
        )
        return Response(plain(result), status=200 if result.ok else 207)


# -- the KRaft lifecycle (admins; held where change control holds the kraft.* kinds) ----------------


class FeaturesIn(serializers.Serializer):
    updates = serializers.DictField(
        child=serializers.CharField(max_length=20),
        help_text="feature -> level, as kafka-features.sh --feature name=level; metadata.version also "
        "by release name (4.1-IV1, or 4.1 for its newest level)",
    )
    upgrade_type = serializers.ChoiceField(choices=list(core.UPGRADE_TYPES), default=core.UPGRADE)
    dry_run = serializers.BooleanField(
        default=True, help_text="Kafka's validate-only answer; nothing changes"
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class VoterIn(serializers.Serializer):
    node_id = serializers.IntegerField(min_value=0, max_value=core.MAX_NODE_ID)
    directory_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=40)
    endpoint = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=300, help_text="add: CONTROLLER://host:port"
    )
    allow_leader = serializers.BooleanField(default=False, help_text="remove: the active controller too")
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class HeldIn(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


def _release(f) -> str:
    """metadata.version's finalized level by release name (4.1-IV1); "" for other features."""
    return core.metadata_release(f.finalized_max) if f.name == core.METADATA_VERSION else ""


def _answer(result) -> Response:
    return Response(result.as_json(), status=200 if result.ok else 207)


class Features(ApiView):
    @reads("quorum_features_list")
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        found = sorted(features.describe(actor=request.user, cluster=cluster).values(), key=lambda f: f.name)
        return Response([{**plain(f), "release": _release(f)} for f in found])

    @writes("quorum_features_update", (200, 207), request=FeaturesIn, held=True)
    def post(self, request, name: str):
        """Kafka's validate-only answer (``dry_run``, the default), or the change (held where held)."""
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(FeaturesIn)
        user = request.user
        change = {"updates": dict(d["updates"]), "upgrade_type": d["upgrade_type"]}
        if not d["dry_run"]:
            answer = hold(
                self, cluster, held.FEATURES_GATE, lambda: held.prepare_features(user, cluster, **change)
            )
            if answer is not None:
                return answer
        return _answer(
            features.update_features(
                actor=user, cluster=cluster, dry_run=d["dry_run"], source_ip=self.ip, **change
            )
        )


def _voter_change(view, request, name: str, kind: str, run, extra: tuple[str, ...]):
    cluster = view.cluster(name, access.ADMINISTER)
    d = view.body(VoterIn)
    user = request.user
    change = {"node_id": d["node_id"], "directory_id": d["directory_id"], **{k: d[k] for k in extra}}
    answer = hold(view, cluster, held.VOTER_GATE, lambda: held.prepare_voter(user, cluster, kind, **change))
    if answer is not None:
        return answer
    return _answer(run(actor=user, cluster=cluster, source_ip=view.ip, **change))


class VoterAdd(ApiView):
    @writes("quorum_voters_add", (200, 207), request=VoterIn, held=True)
    def post(self, request, name: str):
        return _voter_change(self, request, name, held.ADD, voters.add_voter, ("endpoint",))


class VoterRemove(ApiView):
    @writes("quorum_voters_remove", (200, 207), request=VoterIn, held=True)
    def post(self, request, name: str):
        return _voter_change(self, request, name, held.REMOVE, voters.remove_voter, ("allow_leader",))


class BrokerUnregister(ApiView):
    @writes("brokers_unregister", (200, 207), request=HeldIn, held=True)
    def post(self, request, name: str, broker: int):
        """Remove a stopped broker's registration (refused while it is alive or hosts replicas)."""
        cluster = self.cluster(name, access.ADMINISTER)
        self.body(HeldIn)
        user = request.user
        answer = hold(
            self, cluster, held.UNREGISTER_GATE, lambda: held.prepare_unregister(user, cluster, broker)
        )
        if answer is not None:
            return answer
        return _answer(
            unregister.unregister_broker(actor=user, cluster=cluster, broker_id=broker, source_ip=self.ip)
        )
