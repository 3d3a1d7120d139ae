"""Parsers for batch topic creation: YAML, JSON or CSV text into TopicSpecs (pure, no I/O).

The text is read by ``console.uploads`` (size and depth limits, no YAML anchors). Every
problem carries the line and column it was found at (1-based), so the page can say "line 7,
column 14: partitions must be a whole number". Nothing is silently skipped: a parse either
returns every topic or raises BatchParseError listing every problem found.

Accepted shapes (YAML and JSON)::

    topics:                      # or a bare list
      - name: orders
        partitions: 6
        replication_factor: 3    # also replication-factor / rf
        configs: {retention.ms: "86400000"}
      - name: payments
        assignment: [[1, 2], [2, 3]]

CSV: a header row with ``name`` and optionally ``partitions``, ``replication_factor``,
``configs`` ("k=v;k=v") and any ``config.<key>`` columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from console.uploads import UploadError, compose_yaml, csv_rows, load_json


@dataclass(frozen=True)
class TopicSpec:
    """A topic to create as the operator described it."""

    name: str
    partitions: int = -1
    replication_factor: int = -1
    assignment: tuple[tuple[int, ...], ...] | None = None
    configs: dict[str, str] = field(default_factory=dict, hash=False)

    def as_params(self) -> dict:
        data: dict = {"partitions": self.partitions, "replication_factor": self.replication_factor}
        if self.assignment is not None:
            data = {"assignment": [list(r) for r in self.assignment]}
        if self.configs:
            data["configs"] = dict(self.configs)
        return data


FORMATS = ("yaml", "json", "csv")
_RF_KEYS = ("replication_factor", "replication-factor", "rf")
_KNOWN_KEYS = {"name", "partitions", "assignment", "configs", *_RF_KEYS}


@dataclass(frozen=True)
class ParseProblem:
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


class BatchParseError(ValueError):
    def __init__(self, problems: list[ParseProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def detect_format(text: str, filename: str = "") -> str:
    """From the file extension, else from the first non-blank character / line."""
    lower = filename.lower()
    for fmt, exts in (("json", (".json",)), ("csv", (".csv",)), ("yaml", (".yaml", ".yml"))):
        if lower.endswith(exts):
            return fmt
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        return "json"
    first = stripped.splitlines()[0] if stripped else ""
    if "," in first and ":" not in first and first.split(",")[0].strip().lower() == "name":
        return "csv"
    return "yaml"


def parse_batch(text: str, fmt: str | None = None, filename: str = "") -> list[TopicSpec]:
    """Parse the text in ``fmt`` (detected when None); raises BatchParseError."""
    fmt = fmt or detect_format(text, filename)
    if fmt == "csv":
        return parse_csv(text)
    if fmt == "json":
        return parse_json(text)
    if fmt == "yaml":
        return parse_yaml(text)
    raise BatchParseError([ParseProblem(1, 1, f"unknown format '{fmt}' (use {', '.join(FORMATS)})")])


# -- YAML / JSON ---------------------------------------------------------------------------------


def _at(node) -> tuple[int, int]:
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


class _Builder:
    """Turns composed YAML nodes into specs, collecting problems with their positions."""

    def __init__(self) -> None:
        self.problems: list[ParseProblem] = []

    def fail(self, node, message: str) -> None:
        line, col = _at(node)
        self.problems.append(ParseProblem(line, col, message))

    def scalar(self, node) -> str | None:
        if not isinstance(node, yaml.ScalarNode):
            self.fail(node, "expected a single value here")
            return None
        return node.value

    def integer(self, node, what: str) -> int | None:
        value = self.scalar(node)
        if value is None:
            return None
        try:
            return int(value.strip())
        except ValueError:
            self.fail(node, f"{what} must be a whole number, not '{value}'")
            return None

    def assignment(self, node) -> tuple[tuple[int, ...], ...] | None:
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self.fail(node, "assignment must be a list of replica lists, e.g. [[1, 2], [2, 3]]")
            return None
        out = []
        for part in node.value:
            if not isinstance(part, yaml.SequenceNode):
                self.fail(part, "each partition's replicas must be a list of broker ids")
                return None
            ids = [self.integer(b, "a broker id") for b in part.value]
            if any(i is None for i in ids):
                return None
            out.append(tuple(ids))
        return tuple(out)

    def configs(self, node) -> dict[str, str]:
        if not isinstance(node, yaml.MappingNode):
            self.fail(node, "configs must be a mapping of key: value")
            return {}
        out = {}
        for key_node, value_node in node.value:
            key, value = self.scalar(key_node), self.scalar(value_node)
            if key is not None and value is not None:
                out[key] = value
        return out

    def topic(self, node) -> TopicSpec | None:
        if not isinstance(node, yaml.MappingNode):
            self.fail(node, "each topic must be a mapping with at least a name")
            return None
        fields = {}
        for key_node, value_node in node.value:
            key = self.scalar(key_node)
            if key is None:
                continue
            if key not in _KNOWN_KEYS:
                self.fail(
                    key_node,
                    f"unknown field '{key}' (use name, partitions, replication_factor, assignment, configs)",
                )
                continue
            fields["replication_factor" if key in _RF_KEYS else key] = value_node
        if "name" not in fields:
            self.fail(node, "this topic has no name")
            return None
        before = len(self.problems)
        name = self.scalar(fields["name"]) or ""
        partitions = self.integer(fields["partitions"], "partitions") if "partitions" in fields else -1
        rf = (
            self.integer(fields["replication_factor"], "replication_factor")
            if "replication_factor" in fields
            else -1
        )
        assignment = self.assignment(fields["assignment"]) if "assignment" in fields else None
        configs = self.configs(fields["configs"]) if "configs" in fields else {}
        if assignment is not None and ("partitions" in fields or "replication_factor" in fields):
            self.fail(
                fields["assignment"], "give either an assignment or partitions/replication_factor, not both"
            )
        if len(self.problems) > before:
            return None
        return TopicSpec(
            name,
            partitions if partitions is not None else -1,
            rf if rf is not None else -1,
            assignment,
            configs,
        )

    def document(self, root) -> list[TopicSpec]:
        items = root
        if isinstance(root, yaml.MappingNode):
            found = [v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "topics"]
            if not found:
                self.fail(root, "expected a list of topics, or a mapping with a 'topics' list")
                return []
            items = found[0]
        if not isinstance(items, yaml.SequenceNode):
            self.fail(items, "expected a list of topics")
            return []
        specs = [self.topic(item) for item in items.value]
        if not items.value:
            self.fail(items, "the list of topics is empty")
        return [s for s in specs if s is not None]


def _refused(exc: UploadError) -> BatchParseError:
    return BatchParseError([ParseProblem(exc.line, exc.column, exc.message)])


def _compose(text: str):
    """The bounded parser's nodes (size, depth, no anchors; never libyaml's C composer)."""
    try:
        return compose_yaml(text)
    except UploadError as exc:
        raise _refused(exc) from None


def _build(root) -> list[TopicSpec]:
    if root is None:
        raise BatchParseError([ParseProblem(1, 1, "the text is empty")])
    builder = _Builder()
    specs = builder.document(root)
    if builder.problems:
        raise BatchParseError(builder.problems)
    return specs


def parse_yaml(text: str) -> list[TopicSpec]:
    return _build(_compose(text))


def parse_json(text: str) -> list[TopicSpec]:
    """Strict JSON syntax first (JSON's own line/column), then the YAML composer for positions."""
    try:
        load_json(text)
    except UploadError as exc:
        raise _refused(exc) from None
    return _build(_compose(text.replace("\t", " ")))


# -- CSV -----------------------------------------------------------------------------------------


def _csv_configs(cell: str, line: int, column: int, problems: list[ParseProblem]) -> dict[str, str]:
    out = {}
    for part in (p for p in cell.split(";") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            problems.append(
                ParseProblem(line, column, f"configs must look like key=value;key=value, not '{part}'")
            )
            continue
        out[key.strip()] = value.strip()
    return out


def parse_csv(text: str) -> list[TopicSpec]:
    try:
        rows = csv_rows(text)
    except UploadError as exc:
        raise _refused(exc) from None
    problems: list[ParseProblem] = []
    header = rows[0][1] if rows else None
    if header is None or not any(h.strip() for h in header):
        raise BatchParseError(
            [ParseProblem(1, 1, "the CSV has no header row (name,partitions,replication_factor)")]
        )
    columns = [h.strip().lower() for h in header]
    if "name" not in columns:
        raise BatchParseError([ParseProblem(1, 1, "the header row needs a 'name' column")])
    for i, col in enumerate(columns):
        if col not in _KNOWN_KEYS - {"assignment"} and not col.startswith("config."):
            problems.append(ParseProblem(1, i + 1, f"unknown column '{col}'"))
    specs = []
    for line, row in rows[1:]:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            problems.append(ParseProblem(line, 1, f"expected {len(columns)} fields, found {len(row)}"))
            continue
        spec = _csv_row(dict(zip(columns, row, strict=True)), columns, line, problems)
        if spec is not None:
            specs.append(spec)
    if problems:
        raise BatchParseError(problems)
    if not specs:
        raise BatchParseError([ParseProblem(1, 1, "the CSV lists no topics")])
    return specs


def _csv_row(
    cells: dict[str, str], columns: list[str], line: int, problems: list[ParseProblem]
) -> TopicSpec | None:
    before = len(problems)
    numbers = {}
    for key in ("partitions", *_RF_KEYS):
        raw = cells.get(key, "").strip()
        if not raw:
            continue
        try:
            numbers["partitions" if key == "partitions" else "rf"] = int(raw)
        except ValueError:
            problems.append(
                ParseProblem(line, columns.index(key) + 1, f"{key} must be a whole number, not '{raw}'")
            )
    configs = {}
    for i, col in enumerate(columns):
        if col == "configs":
            configs.update(_csv_configs(cells[col], line, i + 1, problems))
        elif col.startswith("config.") and cells[col].strip():
            configs[col.removeprefix("config.")] = cells[col].strip()
    if len(problems) > before:
        return None
    return TopicSpec(
        cells["name"].strip(), numbers.get("partitions", -1), numbers.get("rf", -1), None, configs
    )
