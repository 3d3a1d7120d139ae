"""``manage.py kafka quorum describe|add-voter|remove-voter``, ``kafka features describe|upgrade|downgrade``
and ``kafka brokers unregister``: ``kafka-metadata-quorum.sh``, ``kafka-features.sh`` and
``kafka-cluster.sh unregister`` over the quorum area (admins; the changes holdable).

Options follow Kafka's tools: ``--controller-id`` / ``--controller-directory-id`` (remove-controller),
``--controller-endpoint`` (what add-controller reads from the controller's properties),
``--feature name=level`` (repeatable), ``--unsafe`` and ``--dry-run``. A dry run is Kafka's
validate-only answer and is never held.
"""

from __future__ import annotations

from console.management.cli.base import FAILED, OK, common, holdable
from console.quorum import actions, core, features, held, unregister, voters

RESULT_COLUMNS = ["action", "target", "ok", "message"]


def add_parsers(area) -> None:
    q = area.add_parser("quorum", help="describe, add-voter, remove-voter (KRaft quorum, KIP-853)")
    sub = q.add_subparsers(dest="action", required=True)
    common(
        sub.add_parser(
            "describe", help="voters and observers with their directory ids, as describe --replication"
        )
    )
    p = sub.add_parser("add-voter", help="add a caught-up controller (an observer) to the voters")
    common(p)
    p.add_argument("--controller-id", type=int, required=True)
    p.add_argument("--controller-directory-id", default="", help="default: the one it fetches with")
    p.add_argument(
        "--controller-endpoint",
        default="",
        metavar="CONTROLLER://HOST:PORT",
        help="default (through the controllers): its registered endpoint",
    )
    holdable(p)
    p = sub.add_parser(
        "remove-voter", help="remove a voter (refused when the quorum would lose its majority)"
    )
    common(p)
    p.add_argument("--controller-id", type=int, required=True)
    p.add_argument("--controller-directory-id", default="", help="default: the voter's")
    p.add_argument("--allow-leader", action="store_true", help="the active controller too (it resigns)")
    holdable(p)

    f = area.add_parser("features", help="describe, upgrade, downgrade (finalized feature levels)")
    sub = f.add_subparsers(dest="action", required=True)
    common(sub.add_parser("describe", help="supported ranges and finalized levels"))
    for verb in ("upgrade", "downgrade"):
        p = sub.add_parser(verb, help=f"{verb} features (--dry-run: Kafka's validate-only answer)")
        common(p)
        p.add_argument("--feature", action="append", default=[], metavar="NAME=LEVEL")
        p.add_argument(
            "--metadata",
            metavar="RELEASE",
            help="metadata.version by release name: 4.1-IV1, or 4.1 (its newest)",
        )
        p.add_argument("--dry-run", action="store_true")
        if verb == "downgrade":
            p.add_argument(
                "--unsafe", action="store_true", help="a lossy downgrade (metadata.version needs it)"
            )
        holdable(p)

    b = area.add_parser("brokers", help="unregister (a broker that is gone)")
    sub = b.add_subparsers(dest="action", required=True)
    p = sub.add_parser("unregister", help="remove a stopped broker's registration (it must host no replica)")
    common(p)
    p.add_argument("broker_id", type=int)
    holdable(p)


class Commands:
    def _kraft_emit(self, result) -> int:
        self._emit([result.as_json()], RESULT_COLUMNS, {"result": result.as_json()})
        return OK if result.ok else FAILED

    def _quorum_describe(self, cluster, actor) -> int:
        view = actions.describe_quorum(actor=actor, cluster=cluster)
        if view.quorum_error is not None:
            raise view.quorum_error
        info = voters.members(cluster)[0]
        rows = [
            {
                "node_id": m.id,
                "directory_id": m.directory_id,
                "log_end_offset": m.log_end_offset,
                "lag": max(0, info.high_watermark - m.log_end_offset),
                "status": ("Leader" if m.id == info.leader_id else "Follower")
                if role == "voter"
                else "Observer",
            }
            for role, group in (("voter", info.voters), ("observer", info.observers))
            for m in sorted(group, key=lambda m: m.id)
        ]
        self._emit(rows, ["node_id", "directory_id", "log_end_offset", "lag", "status"])
        return OK

    def _quorum_add_voter(self, cluster, actor) -> int:
        o = self.opts
        return self._voter_change(
            cluster, actor, held.ADD, voters.add_voter, endpoint=o["controller_endpoint"]
        )

    def _quorum_remove_voter(self, cluster, actor) -> int:
        o = self.opts
        return self._voter_change(
            cluster, actor, held.REMOVE, voters.remove_voter, allow_leader=o["allow_leader"]
        )

    def _voter_change(self, cluster, actor, kind, run, **extra) -> int:
        o = self.opts
        change = {"node_id": o["controller_id"], "directory_id": o["controller_directory_id"], **extra}
        result = self._run_or_hold(
            cluster, actor, held.VOTER_GATE,
            lambda: held.prepare_voter(actor, cluster, kind, **change),
            lambda: run(actor=actor, cluster=cluster, **change),
        )  # fmt: skip
        return self._kraft_emit(result)

    def _features_describe(self, cluster, actor) -> int:
        rows = [
            {
                "feature": f.name,
                "supported_min": f.supported_min,
                "supported_max": f.supported_max,
                "finalized": f.finalized_max if f.finalized_max is not None else 0,
                "release": core.metadata_release(f.finalized_max) if f.name == core.METADATA_VERSION else "",
            }
            for f in sorted(features.describe(actor=actor, cluster=cluster).values(), key=lambda f: f.name)
        ]
        self._emit(rows, ["feature", "supported_min", "supported_max", "finalized", "release"])
        return OK

    def _features_change(self, cluster, actor, kind: str) -> int:
        o = self.opts
        named = [f"{core.METADATA_VERSION}={o['metadata']}"] if o.get("metadata") else []
        change = {"updates": list(o["feature"] or []) + named, "upgrade_type": kind}
        if o["dry_run"]:
            result = features.update_features(actor=actor, cluster=cluster, dry_run=True, **change)
        else:
            result = self._run_or_hold(
                cluster, actor, held.FEATURES_GATE,
                lambda: held.prepare_features(actor, cluster, **change),
                lambda: features.update_features(actor=actor, cluster=cluster, **change),
            )  # fmt: skip
        return self._kraft_emit(result)

    def _features_upgrade(self, cluster, actor) -> int:
        return self._features_change(cluster, actor, core.UPGRADE)

    def _features_downgrade(self, cluster, actor) -> int:
        unsafe = self.opts.get("unsafe")
        return self._features_change(cluster, actor, core.UNSAFE_DOWNGRADE if unsafe else core.SAFE_DOWNGRADE)

    def _brokers_unregister(self, cluster, actor) -> int:
        broker = self.opts["broker_id"]
        result = self._run_or_hold(
            cluster, actor, held.UNREGISTER_GATE,
            lambda: held.prepare_unregister(actor, cluster, broker),
            lambda: unregister.unregister_broker(actor=actor, cluster=cluster, broker_id=broker),
        )  # fmt: skip
        return self._kraft_emit(result)
