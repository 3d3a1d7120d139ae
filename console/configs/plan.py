"""Planning a config change (pure): the per-key diff of what would change, before anything reaches Kafka."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from console.formatting import human_config_value
from console.kafka import ConfigChange, ConfigEntry, ConfigResource

# Names of Kafka's PASSWORD-type configs (ssl.*.password, sasl.jaas.config, ssl.keystore.key,
# *.certificate.chain, password.encoder.secret, delegation.token.secret.key, ...) and look-alikes.
_SECRET_NAME = re.compile(
    r"(password|secret|token|sasl\.jaas|ssl\.key|certificate|credential|private)", re.IGNORECASE
)


def looks_secret(name: str) -> bool:
    """Whether a config name is one whose value must never be shown (before Kafka says so)."""
    return bool(_SECRET_NAME.search(name))


HIDDEN = "(hidden)"
NOT_SET = "(not set)"
SOURCE_LABELS = {
    "DYNAMIC_TOPIC_CONFIG": "topic override",
    "DYNAMIC_BROKER_CONFIG": "dynamic broker",
    "DYNAMIC_DEFAULT_BROKER_CONFIG": "dynamic default",
    "DYNAMIC_BROKER_LOGGER_CONFIG": "broker logger",
    "STATIC_BROKER_CONFIG": "static broker",
    "DEFAULT_CONFIG": "default",
    "UNKNOWN": "unknown",
}
OPS = ("SET", "DELETE", "APPEND", "SUBTRACT")


_SET_SOURCE = {"TOPIC": "DYNAMIC_TOPIC_CONFIG", "BROKER": "DYNAMIC_BROKER_CONFIG"}


class ConfigPlanError(ValueError):
    """The requested changes cannot be applied as asked (unknown key, read-only, bad op)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors))


def _set_source(resource: ConfigResource) -> str:
    if resource.type == "BROKER" and not resource.name:
        return "DYNAMIC_DEFAULT_BROKER_CONFIG"
    return _SET_SOURCE.get(resource.type, "DYNAMIC_BROKER_CONFIG")


@dataclass(frozen=True)
class ConfigDiff:
    """One line of the diff shown before anything is applied."""

    name: str
    op: str
    old_value: str | None
    new_value: str | None
    old_source: str
    new_source: str
    sensitive: bool = False

    @property
    def changed(self) -> bool:
        return (self.old_value, self.old_source) != (self.new_value, self.new_source) or self.sensitive

    @property
    def old_display(self) -> str:
        return HIDDEN if self.sensitive else (NOT_SET if self.old_value is None else self.old_value)

    @property
    def new_display(self) -> str:
        return HIDDEN if self.sensitive else (NOT_SET if self.new_value is None else self.new_value)

    @property
    def old_human(self) -> str | None:
        return None if self.sensitive else human_config_value(self.name, self.old_value)

    @property
    def new_human(self) -> str | None:
        return None if self.sensitive else human_config_value(self.name, self.new_value)

    @property
    def old_source_label(self) -> str:
        return source_label(self.old_source)

    @property
    def new_source_label(self) -> str:
        return source_label(self.new_source)


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _inherited(entry: ConfigEntry | None, override_source: str) -> tuple[str | None, str]:
    """The value and source a key falls back to once its override is deleted."""
    if entry is None:
        return None, "DEFAULT_CONFIG"
    for syn in entry.synonyms:
        if syn.source != override_source:
            return syn.value, syn.source
    if entry.source != override_source:
        return entry.value, entry.source
    return None, "DEFAULT_CONFIG"


def plan_changes(
    resource: ConfigResource,
    entries: Mapping[str, ConfigEntry],
    changes: list[ConfigChange],
    catalogue: Mapping[str, ConfigEntry] | None = None,
) -> list[ConfigDiff]:
    """The diff of applying ``changes`` to ``entries``; raises ConfigPlanError listing every problem."""
    catalogue = entries if catalogue is None else catalogue
    override = _set_source(resource)
    errors, diffs, seen = [], [], set()
    for ch in changes:
        known = catalogue.get(ch.name)
        current = entries.get(ch.name)
        if ch.op not in OPS:
            errors.append(f"'{ch.op}' is not a config operation (use {', '.join(OPS)}).")
            continue
        if ch.name in seen:
            errors.append(f"'{ch.name}' is changed twice; combine the changes into one.")
            continue
        seen.add(ch.name)
        if known is None:
            errors.append(f"'{ch.name}' is not a known config of this {resource.type.lower()}.")
            continue
        if known.read_only:
            errors.append(
                f"'{ch.name}' is read-only: it can only be changed in the broker's static configuration."
            )
            continue
        if ch.op in ("APPEND", "SUBTRACT") and known.type not in (None, "LIST"):
            errors.append(f"'{ch.name}' is not a list ({known.type}); {ch.op} only applies to list configs.")
            continue
        if ch.op != "DELETE" and ch.value is None:
            errors.append(f"{ch.op} '{ch.name}' needs a value.")
            continue
        sensitive = known.sensitive or (known.type == "PASSWORD")
        old_value = None if current is None else current.value
        old_source = "DEFAULT_CONFIG" if current is None else current.source
        if ch.op == "SET":
            new_value, new_source = ch.value, override
        elif ch.op == "DELETE":
            if old_source != override:
                errors.append(
                    f"'{ch.name}' has no override here to delete (its value comes from {source_label(old_source)})."
                )
                continue
            new_value, new_source = _inherited(current, override)
        else:
            items = _split(old_value)
            given = _split(ch.value)
            if ch.op == "APPEND":
                items += [v for v in given if v not in items]
            else:
                items = [v for v in items if v not in given]
            new_value, new_source = ",".join(items), override
        diffs.append(ConfigDiff(ch.name, ch.op, old_value, new_value, old_source, new_source, sensitive))
    if errors:
        raise ConfigPlanError(errors)
    return diffs


def source_label(source: str) -> str:
    return SOURCE_LABELS.get(source, source.lower().replace("_", " "))
