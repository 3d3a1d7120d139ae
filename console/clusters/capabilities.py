"""Which console sections a cluster connection offers, and why not (KIP-919).

A cluster registered with bootstrap controllers talks to the KRaft quorum directly. The
controllers serve only KIP-919's API subset: describe cluster, describe/alter configs,
ACLs, elect leaders, alter/list reassignments, features and the metadata quorum. Every
other section is shown as unavailable with the reason, from this one table, so pages ask
``unavailable_reason(cluster, "topics")`` instead of repeating the rule.

Pages render the reason with ``templates/console/_controller_mode_unavailable.html``
(``{% include ... with reason=... %}``) or, for a whole page,
``console.views.capabilities.unavailable_page``.
"""

from __future__ import annotations

from dataclasses import dataclass

BROKERS = "brokers"
CONTROLLERS = "controllers"


@dataclass(frozen=True)
class Section:
    """One console section and the connection modes that can serve it."""

    key: str
    label: str
    modes: frozenset[str]
    #: why the section is unavailable in the mode it does not support
    reason: str
    #: the Kafka APIs the section relies on (shown on the quorum page's capability table)
    apis: str = ""
    #: what is limited in controller mode when the section is offered there only in part
    controller_note: str = ""


_BOTH = frozenset({BROKERS, CONTROLLERS})
_BROKERS_ONLY = frozenset({BROKERS})
_CONTROLLERS_ONLY = frozenset({CONTROLLERS})

_NEEDS_BROKERS = (
    "{what} needs {api}, which KRaft controllers do not serve (UNSUPPORTED_ENDPOINT_TYPE, KIP-919). "
    "Register the brokers as bootstrap servers (a separate cluster entry) to use it."
)

SECTIONS: dict[str, Section] = {
    s.key: s
    for s in (
        Section("overview", "Overview", _BOTH, "", "DescribeCluster"),
        Section("quorum", "Quorum", _BOTH, "", "DescribeQuorum, ApiVersions (features)"),
        Section(
            "topics",
            "Topics",
            _BROKERS_ONLY,
            _NEEDS_BROKERS.format(
                what="Listing and changing topics", api="Metadata/CreateTopics/DeleteTopics"
            ),
            "Metadata, CreateTopics, DeleteTopics, CreatePartitions",
        ),
        Section(
            "configs",
            "Configs",
            _BOTH,
            "",
            "DescribeConfigs, IncrementalAlterConfigs",
            "Topic configs and changes to broker configs go through the controllers; a controller "
            "describes only its own node's configs, so a broker's current configs need brokers.",
        ),
        Section("acls", "ACLs", _BOTH, "", "DescribeAcls, CreateAcls, DeleteAcls"),
        Section(
            "reassignments",
            "Reassignments",
            _BOTH,
            "",
            "AlterPartitionReassignments, ListPartitionReassignments",
            "Listing, submitting and cancelling reassignments work; planning from the current "
            "placement (Metadata) and copy progress in bytes (DescribeLogDirs) need brokers.",
        ),
        Section(
            "elections",
            "Leader elections",
            _BOTH,
            "",
            "ElectLeaders",
            "Electing leaders of named partitions works; finding partitions whose leader is not "
            "the preferred replica needs Metadata from the brokers.",
        ),
        Section(
            "requests",
            "Requests",
            _BROKERS_ONLY,
            _NEEDS_BROKERS.format(what="Approving topic requests", api="CreateTopics and Metadata"),
            "CreateTopics, Metadata",
        ),
        Section(
            "log_dirs",
            "Log directories",
            _BROKERS_ONLY,
            _NEEDS_BROKERS.format(what="Disk usage per broker", api="DescribeLogDirs"),
            "DescribeLogDirs",
        ),
        Section(
            "capacity",
            "Capacity",
            _BROKERS_ONLY,
            _NEEDS_BROKERS.format(what="Capacity telemetry", api="Metadata, DescribeLogDirs and ListOffsets"),
            "Metadata, DescribeLogDirs, ListOffsets",
        ),
        Section(
            "offsets",
            "Offsets",
            _BROKERS_ONLY,
            _NEEDS_BROKERS.format(what="Partition offsets", api="ListOffsets"),
            "ListOffsets",
        ),
        Section(
            "groups",
            "Consumer groups",
            _BROKERS_ONLY,
            _NEEDS_BROKERS.format(what="Consumer groups", api="ListGroups/DescribeGroups"),
            "ListGroups, DescribeGroups, OffsetFetch",
        ),
        Section("health", "Health check", _BOTH, "", "DescribeCluster (from a worker)"),
        Section(
            "controllers",
            "Controller configs and log levels",
            _CONTROLLERS_ONLY,
            "Controller configs and log levels are read and changed on the controllers themselves: "
            "register the controllers as bootstrap controllers (a separate cluster entry, KIP-919).",
            "DescribeConfigs, IncrementalAlterConfigs (BROKER_LOGGER) on a named controller",
        ),
    )
}


def mode_of(cluster) -> str:
    """``"controllers"`` for a KIP-919 direct-to-controller cluster, else ``"brokers"``."""
    return CONTROLLERS if getattr(cluster, "controller_mode", False) else BROKERS


def section(key: str) -> Section:
    try:
        return SECTIONS[key]
    except KeyError:
        raise KeyError(f"unknown console section {key!r}; known: {', '.join(sorted(SECTIONS))}") from None


def available(cluster, key: str) -> bool:
    """Whether the cluster's connection mode offers the section."""
    return mode_of(cluster) in section(key).modes


def unavailable_reason(cluster, key: str) -> str | None:
    """None when the section works on this cluster, else a sentence saying why not and what to do."""
    s = section(key)
    return None if mode_of(cluster) in s.modes else s.reason


@dataclass(frozen=True)
class CapabilityRow:
    key: str
    label: str
    available: bool
    reason: str
    apis: str
    note: str = ""


def capability_table(cluster) -> list[CapabilityRow]:
    """Every section with its availability on this cluster (for display)."""
    mode = mode_of(cluster)
    return [
        CapabilityRow(
            s.key,
            s.label,
            mode in s.modes,
            "" if mode in s.modes else s.reason,
            s.apis,
            s.controller_note if mode == CONTROLLERS and mode in s.modes else "",
        )
        for s in SECTIONS.values()
    ]
