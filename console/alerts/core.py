"""What the rules find, from plain data (pure: no Django, no I/O).

The evaluator measures each rule's value per subject (``Measure``); a rule whose reads failed is not
measured this round (None), and its open alerts stay as they are. ``findings`` keeps the measures
that break their rule's effective threshold; ``evaluated`` says which rules had their say, so the
lifecycle resolves their open alerts not found again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from console.alerts.rules import RULES, Effective

SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class Measure:
    """One rule's value on one subject ("" for the cluster), with the words that say it."""

    value: float
    summary: str
    details: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Finding:
    """A measure that breaks its rule's threshold: the condition an alert is for."""

    rule: str
    subject: str
    value: float
    threshold: float
    severity: str
    summary: str
    details: dict = field(default_factory=dict, hash=False)


#: {rule: {subject: Measure}}, or None for a rule not measured this round (its reads failed).
Measures = Mapping[str, Mapping[str, Measure] | None]


def findings(measures: Measures, settings: Mapping[str, Effective]) -> tuple[set[str], list[Finding]]:
    """(the rules evaluated this round, the conditions found). A disabled rule counts as evaluated
    with nothing found (its open alerts resolve); an unmeasured one is left out."""
    evaluated: set[str] = set()
    found: list[Finding] = []
    for name, rule in RULES.items():
        effective = settings[name]
        if not effective.enabled:
            evaluated.add(name)
            continue
        if name not in measures or measures[name] is None:
            continue
        evaluated.add(name)
        for subject, m in sorted(measures[name].items()):
            if rule.breaks(m.value, effective.threshold):
                found.append(
                    Finding(
                        name, subject, m.value, effective.threshold, effective.severity, m.summary, m.details
                    )
                )
    return evaluated, found


def one(measure: Measure) -> dict[str, Measure]:
    """A cluster-wide rule's measures: the cluster's one."""
    return {"": measure}


def partition_measures(
    under_replicated: int, offline: int, under_min_isr: int
) -> dict[str, dict[str, Measure]]:
    """The three partition counts as their rules' measures."""
    return {
        "under_replicated": one(
            Measure(under_replicated, f"{under_replicated} partition(s) under-replicated")
        ),
        "offline_partitions": one(Measure(offline, f"{offline} partition(s) offline (no leader)")),
        "under_min_isr": one(Measure(under_min_isr, f"{under_min_isr} partition(s) under min ISR")),
    }


def broker_measures(states: Iterable[tuple[int, str, str]]) -> dict[str, Measure]:
    """``(broker id, state, why)`` of every known broker: 1 for each that is not up, 0 otherwise."""
    out = {}
    for broker, state, why in states:
        down = state != "up"
        text = f"broker {broker} is {state}" + (f": {why}" if down and why else "")
        out[f"broker {broker}"] = Measure(1.0 if down else 0.0, text, {"broker": broker, "state": state})
    return out


def quorum_measures(voters: Iterable[tuple[int, int]]) -> dict[str, Measure]:
    """``(voter id, lag in records)`` of each voter of the metadata quorum."""
    return {
        f"voter {voter}": Measure(lag, f"controller {voter} is {lag} record(s) behind the quorum leader")
        for voter, lag in voters
    }


def controller_measure(changes: int, leader: int | None, window_s: float) -> dict[str, Measure]:
    """How many times the quorum's leader changed within the last ``window_s``."""
    minutes = f"{window_s / 60:g}"
    text = f"the active controller changed {changes} time(s) in the last {minutes} min (now {leader})"
    return one(Measure(changes, text, {"leader": leader}))


def group_lags(
    committed: Mapping[str, Mapping[tuple[str, int], int]], ends: Mapping[tuple[str, int], int]
) -> dict[str, dict[tuple[str, int], int]]:
    """Each group's lag per partition (log end minus committed, never below 0) where the end is known."""
    out: dict[str, dict[tuple[str, int], int]] = {}
    for group, offsets in committed.items():
        lags = {}
        for tp, offset in offsets.items():
            end = ends.get(tp)
            if end is not None and end >= 0 and offset >= 0:
                lags[tp] = max(0, end - offset)
        out[group] = lags
    return out


def group_measures(lags: Mapping[str, Mapping[tuple[str, int], int]]) -> dict[str, Measure]:
    """A group's lag in messages: the sum over its partitions."""
    out = {}
    for group, per in lags.items():
        total = sum(per.values())
        behind = sum(1 for lag in per.values() if lag > 0)
        text = f"group {group} is {total} message(s) behind on {behind} partition(s)"
        out[f"group {group}"] = Measure(
            total, text, {"group": group, "lag": total, "partitions_behind": behind}
        )
    return out


def time_lag_measures(
    lags: Mapping[str, Mapping[tuple[str, int], int]],
    times: Mapping[tuple[str, int], int | None],
    positions: Mapping[str, Mapping[tuple[str, int], int]],
    now_ms: int,
) -> dict[str, Measure]:
    """How old each group's position is: the oldest of its lagging partitions' records at its
    committed offset (``times``: their timestamps in ms by (group, topic, partition)). A group with
    no lagging partition is 0 s behind; a partition whose record could not be read does not count."""
    out = {}
    for group, per in lags.items():
        oldest: tuple[float, tuple[str, int]] | None = None
        for tp, lag in per.items():
            stamp = times.get((group, *tp)) if lag > 0 else None
            if stamp is None:
                continue
            age = max(0.0, (now_ms - stamp) / 1000.0)
            if oldest is None or age > oldest[0]:
                oldest = (age, tp)
        if oldest is None:
            out[f"group {group}"] = Measure(0.0, f"group {group} is up to date", {"group": group})
            continue
        age, (topic, partition) = oldest
        text = f"group {group}'s position is {_duration(age)} old (at {topic}-{partition})"
        details = {"group": group, "topic": topic, "partition": partition, "seconds": round(age, 1)}
        details["offset"] = positions.get(group, {}).get((topic, partition))
        out[f"group {group}"] = Measure(round(age, 1), text, details)
    return out


def disk_measures(forecast: Iterable[tuple[int, float | None]]) -> dict[str, Measure]:
    """``(broker, days to full)`` from the capacity forecast; a broker without a forecast is left out."""
    return {
        f"broker {broker}": Measure(
            days, f"broker {broker}'s disk is full in {days:.1f} day(s)", {"broker": broker}
        )
        for broker, days in forecast
        if days is not None
    }


def days_left(not_after_s: float, now_s: float) -> float:
    """Days from now to an expiry (negative once expired), rounded to a tenth."""
    return round((not_after_s - now_s) / SECONDS_PER_DAY, 1)


def certificate_measure(role: str, subject: str, days: float) -> dict[str, Measure]:
    """A certificate's days left."""
    when = f"expired {-days:g} day(s) ago" if days < 0 else f"expires in {days:g} day(s)"
    return one(Measure(days, f"the {role} certificate ({subject}) {when}", {"certificate": subject}))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
