"""Planning a config change (pure): the per-key diff of what would change, before anything reaches Kafka."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from console.formatting import human_config_value
from console.kafka import ConfigChange, ConfigEntry, ConfigResource, ConfigSynonym

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
    # After a DELETE whose key is then unset (log.retention.ms): the synonym Kafka applies instead
    # (log.retention.hours = 168, default), never shown as the key's own value.
    applies: ConfigSynonym | None = None

    @property
    def applies_note(self) -> str:
        """ "log.retention.hours = 168 (default) applies: 604800000 ms", or "" when the key holds its value."""
        if self.applies is None or self.sensitive:
            return ""
        syn = self.applies
        note = (
            f"{syn.name} = {NOT_SET if syn.value is None else syn.value} ({source_label(syn.source)}) applies"
        )
        converted = in_unit_of(self.name, syn.name, syn.value)
        if converted is not None and converted != syn.value:
            human = human_config_value(self.name, converted)
            note += f": {converted} ms" + (f" ({human})" if human else "")
        return note

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


_UNIT_MS = {".ms": 1, ".minutes": 60_000, ".hours": 3_600_000}


def _unit(name: str) -> tuple[int, int]:
    """(rank, milliseconds per unit) of a time key by its suffix: Kafka prefers .ms, then .minutes, then .hours."""
    for rank, (suffix, ms) in enumerate(_UNIT_MS.items()):
        if name.endswith(suffix):
            return rank, ms
    return len(_UNIT_MS), 1


def in_unit_of(key: str, synonym: str, value: str | None) -> str | None:
    """A synonym's value in ``key``'s unit (log.retention.hours 168 → 604800000 for a .ms key), else None."""
    if value is None or not key.endswith(".ms") or _unit(synonym)[1] == 1:
        return None
    try:
        return str(int(value.strip()) * _unit(synonym)[1])
    except ValueError:
        return None


def _inherited(
    entry: ConfigEntry | None, override_source: str, resource_type: str
) -> tuple[str | None, str, ConfigSynonym | None]:
    """What Kafka reports for a key once its override is deleted: (value, source, synonym applied instead).

    A broker key reports only its own value (Kafka's synonyms of another name, log.retention.hours for
    log.retention.ms, are what applies instead, in another unit). A topic key reports the value it
    inherits from its broker synonym, converted to its own unit.
    """
    if entry is None:
        return None, "DEFAULT_CONFIG", None
    rest = [syn for syn in entry.synonyms if syn.source != override_source]
    if resource_type == "TOPIC":
        if rest:
            first = rest[0]
            return in_unit_of(entry.name, first.name, first.value) or first.value, first.source, None
    else:
        own = [syn for syn in rest if syn.name == entry.name]
        if own:
            return own[0].value, own[0].source, None
        others = sorted((syn for syn in rest if syn.value is not None), key=lambda syn: _unit(syn.name)[0])
        if others:
            return None, "DEFAULT_CONFIG", others[0]
    if not entry.synonyms and entry.source != override_source:
        return entry.value, entry.source, None
    return None, "DEFAULT_CONFIG", None


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
        applies = None
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
            new_value, new_source, applies = _inherited(current, override, resource.type)
        else:
            items = _split(old_value)
            given = _split(ch.value)
            if ch.op == "APPEND":
                items += [v for v in given if v not in items]
            else:
                items = [v for v in items if v not in given]
            new_value, new_source = ",".join(items), override
        diffs.append(
            ConfigDiff(ch.name, ch.op, old_value, new_value, old_source, new_source, sensitive, applies)
        )
    if errors:
        raise ConfigPlanError(errors)
    return diffs


def source_label(source: str) -> str:
    return SOURCE_LABELS.get(source, source.lower().replace("_", " "))


def reflects(diff: ConfigDiff, entry: ConfigEntry | None, source: str, *, reported: bool = True) -> bool:
    """Whether a describe shows ``diff`` applied in the layer ``source`` it writes (or removes).

    Kafka's synonyms (its dynamic config maps) can show a change before the reported value (its current
    config) does, so both must: the synonym of the key's own name at that source, and the value where
    that layer is the one in force. ``reported=False`` (another resource's view, e.g. a broker's view of
    a cluster default) skips the value a DELETE leaves. A secret's value is never returned: only its
    presence is compared.
    """
    layer = None
    if entry is not None:
        layer = next((s for s in entry.synonyms if s.name == diff.name and s.source == source), None)
        if layer is None and not entry.synonyms and entry.source == source:
            layer = ConfigSynonym(entry.name, entry.value, entry.source)
    if diff.sensitive:
        return (layer is None) == (diff.op == "DELETE")
    if not _settled(entry, source):
        return False
    if diff.op == "DELETE":
        if layer is not None:
            return False
        # a topic then reports the default it inherits, which the plan may not know (None);
        # a broker key reports null
        known = reported and (diff.new_value is not None or source != "DYNAMIC_TOPIC_CONFIG")
        return entry is None or not known or same_value(entry.value, diff.new_value, entry.type)
    if entry is None or layer is None or not same_value(layer.value, diff.new_value, entry.type):
        return False
    return entry.source != source or same_value(entry.value, diff.new_value, entry.type)


def _settled(entry: ConfigEntry | None, source: str) -> bool:
    """Whether a broker's reported value agrees with its synonyms: Kafka reports the value of the first
    synonym of the key's own name (null without one), once it has applied a change to its current config
    as well as to its dynamic maps. Topics (values built from the same record) and entries without
    synonyms cannot tell, so they pass."""
    if source == "DYNAMIC_TOPIC_CONFIG" or entry is None or not entry.synonyms:
        return True
    own = next((s for s in entry.synonyms if s.name == entry.name), None)
    return entry.value is None if own is None else same_value(entry.value, own.value, entry.type)


def same_value(a: str | None, b: str | None, type_: str | None) -> bool:
    """Equal as Kafka parses a value of this type ("016001" is 16001, "a, b" is "a,b")."""
    if a == b:
        return True
    if a is None or b is None:
        return False
    try:
        if type_ in ("INT", "SHORT", "LONG"):
            return int(a.strip()) == int(b.strip())
        if type_ == "DOUBLE":
            return float(a) == float(b)
    except ValueError:
        return False
    if type_ == "BOOLEAN":
        return a.strip().lower() == b.strip().lower()
    if type_ == "LIST":
        return _split(a) == _split(b)
    return False
