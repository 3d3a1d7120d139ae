"""A replica assignment as a person types it (pure): the page's format and kafka-topics' own.

- kafka-topics' ``--replica-assignment``: partitions separated by commas, replicas by colons (``1:2,2:3``);
- the page's field: one partition per line (or ``;``-separated), broker ids separated by commas (``1,2``).

The preferred leader comes first in each partition's list. A text with a colon is kafka-topics'
format; the command line reads every text in that format, as kafka-topics does.
"""

from __future__ import annotations

FORMATS = (
    "kafka-topics' 1:2,2:3 (partitions separated by commas, replicas by colons) or one partition per line "
    "(or ';'-separated) with broker ids separated by commas (1,2)"
)


class AssignmentSyntaxError(ValueError):
    """A partition's text is not a list of broker ids (the door adds which formats it accepts)."""


def parse(text: str, *, kafka_format: bool | None = None) -> list[list[int]]:
    """The replica lists, one per partition in order. ``kafka_format`` None: decided by a colon."""
    if kafka_format is None:
        kafka_format = ":" in text
    if kafka_format:
        parts = [p.strip() for p in text.strip().split(",")]
        separator = ":"
    else:
        parts = [p.strip() for line in text.splitlines() for p in line.split(";") if p.strip()]
        separator = ","
    out = []
    for number, part in enumerate(parts):
        try:
            ids = part.split(separator)
            out.append([int(b) for b in ids] if kafka_format else [int(b) for b in ids if b.strip()])
        except ValueError:
            raise AssignmentSyntaxError(f"Partition {number}: {part!r} is not a list of broker ids") from None
    return out
