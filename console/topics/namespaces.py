"""Namespaces of the topic policy: per topic-name prefix, the configs a new topic there must set and
the defaults it gets for the keys it leaves out (``TopicPolicy.namespace_rules``). Pure: plain maps in
and out; ``policy.check_create`` refuses a missing required key, the create paths apply the defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class NamespaceSettings:
    """What the namespaces a topic name falls in ask of a new topic: ``prefixes`` shortest first (a
    longer prefix's default wins over a shorter one's), the config keys it must set (``required``:
    key -> the prefix asking) and the values it gets for the keys it leaves out (``defaults``)."""

    prefixes: tuple[str, ...] = ()
    required: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # key -> (value, prefix)


def settings(rules: Mapping[str, Mapping], name: str) -> NamespaceSettings:
    """What the namespaces ``name`` falls in ask of it (``rules``: the policy's ``namespace_rules``)."""
    prefixes = tuple(sorted((p for p in rules if name.startswith(p)), key=len))
    required: dict[str, str] = {}
    defaults: dict[str, tuple[str, str]] = {}
    for prefix in prefixes:
        entry = rules[prefix]
        required.update(dict.fromkeys(entry.get("required") or (), prefix))
        defaults.update({k: (str(v), prefix) for k, v in (entry.get("defaults") or {}).items()})
    return NamespaceSettings(prefixes, required, defaults)


def with_defaults(
    rules: Mapping[str, Mapping], name: str, configs: Mapping[str, str | None] | None
) -> tuple[dict[str, str | None], dict[str, tuple[str, str]]]:
    """The configs a new topic is created with: the ones given, then its namespaces' defaults for the
    keys not given; and the defaults that were applied (key -> (value, prefix))."""
    given = dict(configs or {})
    applied = {k: v for k, v in settings(rules, name).defaults.items() if k not in given}
    return {**given, **{k: value for k, (value, _) in applied.items()}}, applied


def applied_text(applied: Mapping[str, tuple[str, str]]) -> str:
    """The defaults a create used, as the outcome and the dry run say it."""
    if not applied:
        return ""
    by_prefix: dict[str, list[str]] = {}
    for key, (value, prefix) in sorted(applied.items()):
        by_prefix.setdefault(prefix, []).append(f"{key}={value}")
    return "; ".join(f"namespace '{p}' defaults applied: {', '.join(kv)}" for p, kv in by_prefix.items())
