"""A KRaft controller's configs and log levels, reached directly on that controller (KIP-919).

Log levels are the BROKER_LOGGER resource of one node: IncrementalAlterConfigs goes to the
named controller itself (KIP-919: "the one case where we don't send the RPC to the active
controller"), so each controller is changed on its own. A change is planned (pure), checked
by Kafka's validate-only, applied unless it is a dry run, re-read, and audited either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from console import access
from console.audit import outcomes as outcomes_log
from console.audit.refusals import refused_as
from console.clusters import capabilities
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.kafka import ClusterInfo, ConfigChange, ConfigResource, KafkaOperationError
from console.quorum import audit_names

#: Kafka's log levels (LogLevelConfig.VALID_LOG_LEVELS).
LOG_LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
#: DELETE on a logger resets it to the root logger's level; the root logger cannot be deleted.
ROOT_LOGGER = "root"
RESET = "RESET"


class ControllerModeRequired(Exception):
    """The cluster is registered with brokers; controllers cannot be addressed by id."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class LogLevelPlanError(ValueError):
    """The requested log-level changes are not valid (unknown level, resetting root...)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors))


def _require_controller_mode(cluster) -> None:
    reason = capabilities.unavailable_reason(cluster, "controllers")
    if reason:
        raise ControllerModeRequired(reason)


def logger_resource(node_id: int) -> ConfigResource:
    return ConfigResource("BROKER_LOGGER", str(node_id))


def target(node_id: int) -> str:
    """How a controller is named in the audit trail."""
    return f"controller:{node_id}"


def list_controllers(*, actor, cluster) -> ClusterInfo:
    """Every controller (id, host, port) and the active one, from DescribeCluster (endpoint type 2)."""
    access.require(actor, cluster, access.VIEW)
    _require_controller_mode(cluster)
    return gateway_for(cluster).describe_cluster()


@dataclass(frozen=True)
class LoggerRow:
    name: str
    level: str
    source: str


@dataclass(frozen=True)
class ControllerConfigs:
    """One controller's configs and log levels; each part carries its own error."""

    node_id: int
    configs: configs.ConfigView | None = None
    configs_error: KafkaOperationError | None = None
    loggers: list[LoggerRow] = field(default_factory=list)
    loggers_error: KafkaOperationError | None = None


def _loggers(gw, node_id: int) -> dict[str, str]:
    res = logger_resource(node_id)
    got = gw.describe_configs([res], include_documentation=False)[res]
    if isinstance(got, KafkaOperationError):
        raise got
    return {name: (e.value or "") for name, e in got.items()}


def describe_controller(*, actor, cluster, node_id: int) -> ControllerConfigs:
    """A controller's configs (value, source, flags; sensitive values hidden) and its log levels."""
    access.require(actor, cluster, access.VIEW)
    _require_controller_mode(cluster)
    gw = gateway_for(cluster)
    parts: dict = {}
    try:
        parts["configs"] = configs.describe_configs(
            actor=actor, cluster=cluster, resource=configs.broker_resource(node_id)
        )
    except KafkaOperationError as exc:
        parts["configs_error"] = exc
    try:
        levels = _loggers(gw, node_id)
        parts["loggers"] = [LoggerRow(n, v, "broker logger") for n, v in sorted(levels.items())]
    except KafkaOperationError as exc:
        parts["loggers_error"] = exc
    return ControllerConfigs(node_id=node_id, **parts)


# -- planning (pure) -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelDiff:
    logger: str
    old: str | None
    new: str  # a level, or RESET (back to the root logger's level)

    @property
    def op(self) -> str:
        return "DELETE" if self.new == RESET else "SET"

    @property
    def changed(self) -> bool:
        return self.old != self.new


def plan_levels(current: dict[str, str], wanted: dict[str, str]) -> list[LevelDiff]:
    """Diff the wanted levels against the current ones; raise LogLevelPlanError on bad input."""
    errors = []
    diffs = []
    for logger, level in wanted.items():
        name = logger.strip()
        level = level.strip().upper()
        if not name:
            errors.append("Give a logger name (for example org.apache.kafka.controller).")
            continue
        if level != RESET and level not in LOG_LEVELS:
            errors.append(f"'{level}' is not a log level for {name}: use one of {', '.join(LOG_LEVELS)}.")
            continue
        if level == RESET and name == ROOT_LOGGER:
            errors.append("The root logger cannot be reset; set a level instead.")
            continue
        diffs.append(LevelDiff(name, current.get(name), level))
    if errors:
        raise LogLevelPlanError(errors)
    return diffs


@dataclass(frozen=True)
class LogLevelResult:
    node_id: int
    diffs: list[LevelDiff]
    dry_run: bool
    ok: bool
    error: KafkaOperationError | None
    audit_id: int | None
    after: dict[str, str] | None = None


def _alter(gw, node_id: int, diffs: list[LevelDiff], *, validate_only: bool) -> KafkaOperationError | None:
    res = logger_resource(node_id)
    request = {res: [ConfigChange(d.logger, d.op, None if d.op == "DELETE" else d.new) for d in diffs]}
    try:
        result = gw.incremental_alter_configs(request, validate_only=validate_only).get(res)
    except KafkaOperationError as exc:
        return exc
    return result if isinstance(result, KafkaOperationError) else None


@refused_as(
    audit_names.LOG_LEVEL_CHANGE,
    LogLevelPlanError,
    ControllerModeRequired,
    targets=lambda k: [f"controller:{k.get('node_id')}"],
)
def change_log_levels(
    *,
    actor,
    cluster,
    node_id: int,
    levels: dict[str, str],
    dry_run: bool = False,
    source_ip: str | None = None,
    request_id: str = "",
) -> LogLevelResult:
    """Set (or RESET) log levels on one controller: plan → validate-only → apply → re-read → audit.

    Raises LogLevelPlanError before anything reaches Kafka, ControllerModeRequired for a broker
    connection, and KafkaOperationError when the controller's current levels cannot be read.
    """
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    _require_controller_mode(cluster)
    gw = gateway_for(cluster)
    current = _loggers(gw, node_id)
    diffs = plan_levels(current, levels)
    error = _alter(gw, node_id, diffs, validate_only=True)
    after = None
    params = {
        "node_id": node_id,
        "dry_run": dry_run,
        "changes": {d.logger: {"op": d.op, "level": None if d.op == "DELETE" else d.new} for d in diffs},
    }
    req = None
    if error is None and not dry_run:
        req = outcomes_log.requested(
            actor=actor, action=audit_names.LOG_LEVEL_CHANGE, cluster=cluster, targets=[target(node_id)],
            params=params, source_ip=source_ip, request_id=request_id,
        )  # fmt: skip
        error = _alter(gw, node_id, diffs, validate_only=False)
        try:
            after = {d.logger: v for d in diffs if (v := _loggers(gw, node_id).get(d.logger)) is not None}
        except KafkaOperationError:
            after = None
        if error is not None and error.name == "REQUEST_TIMED_OUT" and after is not None:
            # A timed-out request may still have applied: believe what the controller says now.
            if all(d.op == "DELETE" or after.get(d.logger) == d.new for d in diffs):
                error = None
    ok = error is None
    outcome = outcomes_log.change_outcome(error, dry_run=dry_run)
    if error is not None:
        outcome["message"] = error.message
    event_id = outcomes_log.settle_or_record(
        req,
        actor=actor,
        action=audit_names.LOG_LEVEL_VALIDATE if dry_run else audit_names.LOG_LEVEL_CHANGE,
        cluster=cluster,
        targets=[target(node_id)],
        params=params,
        before={d.logger: d.old for d in diffs},
        after=after if ok and not dry_run else None,
        outcomes={target(node_id): outcome},
        source_ip=source_ip,
        request_id=request_id,
    )
    return LogLevelResult(node_id, diffs, dry_run, ok, error, event_id, after)


def _reread_levels(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the controller's current level of each logger the change named."""
    levels = _loggers(gateway_for(cluster), int(params["node_id"]))
    return {target(int(params["node_id"])): {name: levels.get(name) for name in params.get("changes", {})}}


outcomes_log.register_reader(audit_names.LOG_LEVEL_CHANGE, _reread_levels)
