"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics, brokers and loggers."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

from sandbox import configs as C
from sandbox.apis import RequestContext, api
from sandbox.state import ClusterState, Topic, topic_name_error

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
DR = DescribeConfigsResponse.DescribeConfigsResult
Entry = DR.DescribeConfigsResourceResult


def _entry(
    name: str,
    d: C.ConfigDef | None,
    layers: list[tuple[str, str | None, int]],
    synonyms: bool,
    docs: bool,
    read_only: bool = False,
    value_layers: list[tuple[str, str | None, int]] | None = None,
) -> Any:
    """One described config; ``value_layers`` give the value when it lags the synonyms (broker configs)."""
    sensitive = bool(d and d.sensitive)
    value, source = (layers[0][1], layers[0][2]) if layers else (d.default if d else None, C.DEFAULT)
    if value_layers is not None:
        value = value_layers[0][1] if value_layers else (d.default if d else None)
    syns = (
        [Entry.DescribeConfigsSynonym(name=n, value=None if sensitive else v, source=s) for n, v, s in layers]
        if synonyms
        else []
    )
    return Entry(
        name=name,
        value=None if sensitive else value,
        read_only=read_only,
        config_source=source,
        is_default=source == C.DEFAULT,
        is_sensitive=sensitive,
        synonyms=syns,
        config_type=d.type if d else 0,
        documentation=(C.describe_doc(d) if d else "") if docs else None,
    )


def _topic_entries(
    st: ClusterState,
    t: Topic,
    node_id: int,
    keys: set[str] | None,
    synonyms: bool,
    docs: bool,
    brokers: dict | None = None,
) -> list[Any]:
    out = []
    for name, d in C.TOPIC_DEFS.items():
        if keys is not None and name not in keys:
            continue
        layers = C.topic_layers(st, t, name, node_id, brokers)
        if not layers:
            layers = [(name, d.default, C.DEFAULT)]
            if not d.synonyms:
                layers = []
        out.append(_entry(name, d, layers, synonyms, docs))
    return out


def _broker_entries(
    st: ClusterState, node_id: int, default_only: bool, keys: set[str] | None, synonyms: bool, docs: bool
) -> list[Any]:
    out = []
    # as this broker has applied them (its dynamic maps; the per-broker values may lag these a little)
    own = st.applied_broker_configs("" if default_only else str(node_id), maps=True)
    defaults = st.applied_broker_configs("", maps=True)
    extra = [n for n in C.DYNAMIC_ONLY if n in own or (not default_only and n in defaults)]
    unknown = [n for n in own if C.broker_def(n) is None]
    for name in [*C.BROKER_DEFS, *extra, *unknown]:
        if keys is not None and name not in keys:
            continue
        d = C.broker_def(name)
        if default_only:
            if name not in defaults:
                continue
            layers = [(name, defaults[name], C.DYNAMIC_DEFAULT)]
            values = None
        else:
            layers = C.broker_layers(st, node_id, name, maps=True)
            values = C.broker_layers(st, node_id, name)
        ro = bool(d and d.read_only)
        out.append(_entry(name, d, layers, synonyms, docs, read_only=ro, value_layers=values))
    return out


def _broker_id_error(
    ctx: RequestContext, name: str, describe: bool, logger: bool = False
) -> tuple[int, str] | None:
    """Nodes describe only themselves (or ""); brokers alter only themselves, controllers any broker."""
    if name == "":
        return None
    if not name.lstrip("-").isdigit():
        return 42, f"Broker id must be an integer, but it is: {name}"
    me = ctx.node.node_id
    if logger:
        return None if int(name) == me else (42, f"Unexpected broker id, expected {me} but received {name}")
    if describe and int(name) != me:
        return 42, f"Unexpected broker id, expected {me} or empty string, but received {name}"
    if not describe and ctx.node.is_controller:
        if int(name) not in ctx.state.brokers:
            return 102, f"No node with id {name} found."
        return None
    if not describe and int(name) != me:
        return 42, f"Unexpected broker id, expected {me}, but received {name}"
    return None


@api(DescribeConfigsRequest, 1, 4, controller=True)
def describe_configs(ctx: RequestContext, req: Any) -> Any:
    """Configs with value, source, synonyms, read-only/sensitive flags, type and documentation."""
    st = ctx.state
    results = []
    brokers: dict = {}  # this node's broker layers, worked out once per request (C.topic_layers)
    for r in req.resources:
        keys = set(r.configuration_keys) if r.configuration_keys is not None else None
        res = DR(
            error_code=0,
            error_message="",
            resource_type=r.resource_type,
            resource_name=r.resource_name,
            configs=[],
        )
        results.append(res)
        syn, docs = bool(req.include_synonyms), bool(req.include_documentation)
        if r.resource_type == TOPIC:
            t = st.topics.get(r.resource_name)
            err = topic_name_error(r.resource_name)
            if err:
                res.error_code, res.error_message = 17, err
            elif t is None:
                res.error_code = 3
            else:
                res.configs = _topic_entries(st, t, ctx.node.node_id, keys, syn, docs, brokers)
        elif r.resource_type in (BROKER, BROKER_LOGGER):
            err = _broker_id_error(ctx, r.resource_name, True, r.resource_type == BROKER_LOGGER)
            if err:
                res.error_code, res.error_message = err
            elif r.resource_type == BROKER:
                nid = int(r.resource_name or ctx.node.node_id)
                res.configs = _broker_entries(st, nid, r.resource_name == "", keys, syn, docs)
            else:
                levels = st.logger_levels.get(int(r.resource_name or ctx.node.node_id), {})
                res.configs = [
                    Entry(
                        name=n,
                        value=levels.get(n, "INFO"),
                        read_only=False,
                        config_source=C.BROKER_LOGGER,
                        is_default=False,
                        is_sensitive=False,
                        synonyms=[],
                        config_type=0,
                        documentation="" if docs else None,
                    )
                    for n in C.LOGGERS
                    if keys is None or n in keys
                ]
        else:
            res.error_code, res.error_message = 42, f"Unsupported resource type {r.resource_type}"
    return DescribeConfigsResponse(version=ctx.version, throttle_time_ms=0, results=results)


OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


def _apply_logger(
    ctx: RequestContext, name: str, ops: list[tuple[str, int, str | None]], validate_only: bool
) -> tuple[int, str | None]:
    err = _broker_id_error(ctx, name, False, logger=True)
    if err:
        return err
    for k, op, v in ops:
        if op in (APPEND, SUBTRACT):
            return 42, f"{OP_NAMES[op]} operation is not allowed for the BROKER_LOGGER resource"
        if op == DELETE and k == "root":
            return 42, "Removing the log level of the root logger is not allowed"
        if k not in C.LOGGERS:
            return 40, f"Logger {k} does not exist!"
        msg = C.validate_logger_level(k, v) if op == SET else None
        if msg:
            return 40, msg
    if not validate_only:
        levels = ctx.state.logger_levels.setdefault(int(name or ctx.node.node_id), {})
        for k, op, v in ops:
            levels.pop(k, None) if op == DELETE else levels.__setitem__(k, v or "INFO")
    return 0, None


def _list_op(
    rtype: int, d: C.ConfigDef | None, k: str, op: int, v: str | None, cur: str | None
) -> tuple[int, str] | str:
    """The new value of an APPEND/SUBTRACT, or an error (Kafka words it differently per type)."""
    if d is None or d.type != C.LIST:
        if rtype == TOPIC:
            return 40, f"Can't {OP_NAMES[op]} to key {k} because its type is not LIST."
        return 40, f"Config value append is not allowed for config key: {k}"
    items = [x.strip() for x in (cur if cur is not None else d.default or "").split(",") if x.strip()]
    for x in (v or "").split(","):
        x = x.strip()
        if op == APPEND and x and x not in items:
            items.append(x)
        elif op == SUBTRACT and x in items:
            items.remove(x)
    return ",".join(items)


def _apply_ops(
    rtype: int, current: dict[str, str], ops: list[tuple[str, int, str | None]], incremental: bool
) -> tuple[int, str | None, dict[str, str]]:
    """Validate ops against a resource's dynamic configs; (code, message, new configs)."""
    new = dict(current) if incremental else {}
    defs = C.TOPIC_DEFS if rtype == TOPIC else {**C.BROKER_DEFS, **C.DYNAMIC_ONLY}
    for k, op, v in ops:
        if op not in OP_NAMES:
            return -1, None, new
        if op in (APPEND, SUBTRACT):
            res = _list_op(rtype, defs.get(k), k, op, v, new.get(k))
            if isinstance(res, tuple):
                return res[0], res[1], new
            v, op = res, SET
        if op == DELETE:
            new.pop(k, None)
            continue
        if v is None and rtype == TOPIC:
            return 42, f"Null value not supported for : {k}", new
        msg = C.validate_topic_config(k, v) if rtype == TOPIC else C.validate_broker_config(k, v)
        if msg:
            return (40 if rtype == TOPIC else 42), msg, new
        if v is None:
            new.pop(k, None)
        else:
            new[k] = v
    return 0, None, new


def _apply(
    ctx: RequestContext,
    rtype: int,
    name: str,
    ops: list[tuple[str, int, str | None]],
    validate_only: bool,
    incremental: bool,
) -> tuple[int, str | None]:
    """Validate and (unless validate_only) apply one resource's config changes."""
    st = ctx.state
    keys = [k for k, _, _ in ops]
    if len(set(keys)) != len(keys):
        return 42, "Error due to duplicate config keys"
    if rtype == TOPIC:
        err = topic_name_error(name)
        if err:
            return 17, err
        t = st.topics.get(name)
        if t is None:
            return 3, f"The topic '{name}' does not exist."
        current = t.configs
    elif rtype == BROKER:
        err = _broker_id_error(ctx, name, False)
        if err:
            return err
        current = st.broker_configs.get(name, {})
    elif rtype == BROKER_LOGGER:
        if not incremental:
            return 42, "AlterConfigs does not support resource type BROKER_LOGGER"
        return _apply_logger(ctx, name, ops, validate_only)
    else:
        return 42, f"Unknown resource type {rtype}"
    code, msg, new = _apply_ops(rtype, current, ops, incremental)
    if code == 0 and not validate_only:
        if rtype == TOPIC:
            st.topics[name].configs = new
            st.record()
        else:
            st.commit_broker_configs(name, new)
    return code, msg


DUPLICATE_RESOURCE = "Each resource must appear at most once."


def _duplicates(resources: list[Any]) -> set[tuple[int, str]]:
    keys = [(r.resource_type, r.resource_name) for r in resources]
    return {k for k in keys if keys.count(k) > 1}


def _alter_each(ctx: RequestContext, req: Any, response: Any, incremental: bool, refusal: Any) -> Any:
    """One answer per resource: a resource named twice (or with a ``refusal(resource)``) refused
    with INVALID_REQUEST, the others' changes applied (legacy: every given key set)."""
    out = []
    ar = response.AlterConfigsResourceResponse
    dup = _duplicates(req.resources)
    for r in req.resources:
        refused = DUPLICATE_RESOURCE if (r.resource_type, r.resource_name) in dup else refusal(r)
        if refused:
            code, msg = 42, refused
        else:
            changes = [(c.name, c.config_operation if incremental else SET, c.value) for c in r.configs]
            code, msg = _apply(ctx, r.resource_type, r.resource_name, changes, req.validate_only, incremental)
        out.append(
            ar(
                error_code=code,
                error_message=msg,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
        )
    return response(version=ctx.version, throttle_time_ms=0, responses=out)


def _null_topic_value(r: Any) -> str | None:
    """Legacy AlterConfigs refuses a topic config without a value."""
    nulls = [c.name for c in r.configs if c.value is None]
    return f"Null value not supported for : {nulls[0]}" if nulls and r.resource_type == TOPIC else None


@api(AlterConfigsRequest, 0, 2, controller=True)
def alter_configs(ctx: RequestContext, req: Any) -> Any:
    """Legacy AlterConfigs: the given set replaces the resource's dynamic configs."""
    return _alter_each(ctx, req, AlterConfigsResponse, False, _null_topic_value)


@api(IncrementalAlterConfigsRequest, 0, 1, controller=True)
def incremental_alter_configs(ctx: RequestContext, req: Any) -> Any:
    """KIP-339 set / delete / append / subtract per config key."""
    return _alter_each(ctx, req, IncrementalAlterConfigsResponse, True, lambda r: None)
