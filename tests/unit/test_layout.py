"""The code keeps its map: no import circle in console/, small modules, no shims, areas used by their face.

Read from the source (ast), so a violation fails here before it confuses a reader.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from tests.import_graph import cycles, graph, module_name, owner

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "console"
# Modules are split by concept, not by length: a module past this many lines usually holds two.
MAX_LINES = 450
# A name that says what was cut out of another module ("views_misc", "rows_more", "helpers2") instead
# of what the module is for.
CUT_OUT = re.compile(r"(^|_)(misc|more|extra|extras|other|others|remaining|continued|part\d*)$|\d$")
AREAS = (
    "topics",
    "configs",
    "acls",
    "reassignment",
    "requests",
    "audit",
    "clusters",
    "quorum",
    "telemetry",
    "brokers",
    "groups",
)
# The pure cores: plans, rules, arithmetic. No database, no Kafka calls, no Django beyond settings.
PURE = (
    "console.formatting",
    "console.operations.core",
    "console.acls.core",
    "console.topics.batch",
    "console.reassignment.planner",
    "console.reassignment.intents",
    "console.reassignment.balance",
    "console.reassignment.progress",
    "console.requests.display",
    "console.groups.core",
    "console.quotas.core",
    "console.uploads",
)
PURE_MAY_IMPORT = re.compile(r"^(console\.kafka\.(types|errors)|console\.formatting|django\.conf|yaml)$")


MODULES = {
    module_name(p, ROOT): p
    for p in CONSOLE.rglob("*.py")
    if "migrations" not in p.parts and "templatetags" not in p.parts
}


def _absolute(node: ast.ImportFrom, path: Path) -> str:
    """The dotted module a ``from`` import names, a relative one (``from .x import y``) resolved
    against the file's own package."""
    if node.level == 0:
        return node.module or ""
    package = module_name(path, ROOT).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every module name a file imports (module level, inside functions and under
    ``if TYPE_CHECKING``; absolute and relative), with its line."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, path)
            if module:
                out.append((module, node.lineno))
                out += [(f"{module}.{a.name}", node.lineno) for a in node.names]
    return out


def _owner(name: str) -> str | None:
    return owner(name, MODULES)


def _graph() -> dict[str, set[str]]:
    return graph(MODULES, lambda mod, path: [name for name, _ in _imports(path)], "console")


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_inside_console():
    assert cycles(_graph()) == []


def _package(mod: str) -> str:
    return ".".join(mod.split(".")[:2])


def _package_graph() -> dict[str, set[str]]:
    """console's packages (and top-level modules) with an edge for any import between them,
    module level or inside a function."""
    graph: dict[str, set[str]] = {}
    for mod, targets in _graph().items():
        edges = graph.setdefault(_package(mod), set())
        edges |= {_package(t) for t in targets if t != "console" and _package(t) != _package(mod)}
    return graph


def test_no_import_circle_between_console_packages():
    """Each package sits above the ones it imports: change control below requests, audit below
    notifications and operations, the doors (api, views) above the areas."""
    assert cycles(_package_graph()) == []


def test_the_doors_import_no_other_door():
    """api and views are doors above the areas: each reaches the areas' public faces, never the other."""
    graph = _package_graph()
    assert "console.views" not in graph["console.api"]
    assert "console.api" not in graph["console.views"]


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_no_module_is_over_the_size_limit(mod):
    lines = len(MODULES[mod].read_text().splitlines())
    assert lines <= MAX_LINES, f"{mod} has {lines} lines: does it hold two concepts? split it by concept"


def test_the_cut_out_name_rule_finds_cut_out_names():
    assert [
        n
        for n in ("views_misc", "rows_more", "helpers2", "part3", "topics", "reset_payload")
        if CUT_OUT.search(n)
    ] == [
        "views_misc",
        "rows_more",
        "helpers2",
        "part3",
    ]


def test_no_module_is_named_after_what_was_cut_out_of_another():
    """Split by concept: each module's name says what it is for."""
    named = [
        p for p in [*CONSOLE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")] if "migrations" not in p.parts
    ]
    assert sorted(str(p.relative_to(ROOT)) for p in named if CUT_OUT.search(p.stem)) == []


def test_no_re_export_shims():
    shims = [
        f"{mod}:{i}"
        for mod, path in MODULES.items()
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if "noqa: F401" in line
    ]
    assert shims == []


def test_console_never_imports_celery_or_tasks():
    bad = [
        f"{mod}:{line} imports {name}"
        for mod, path in MODULES.items()
        for name, line in _imports(path)
        if name.split(".")[0] in ("celery", "tasks", "kombu")
    ]
    assert bad == []


def test_only_the_gateway_imports_a_kafka_client():
    clients = ("kafka", "confluent_kafka", "aiokafka")
    bad = [
        f"{mod}:{line} imports {name}"
        for mod, path in MODULES.items()
        for name, line in _imports(path)
        if name.split(".")[0] in clients and not mod.startswith("console.kafka")
    ]
    assert bad == []


def test_claim_and_finish_code_lives_in_the_runner_only():
    """Only console/operations writes who holds an operation or ends it."""
    writers = re.compile(
        r"claimed_by\s*=|heartbeat_at\s*=|Operation\.objects.*\.update\(|\.(state|finished_at)\s*=\s*OperationState"
    )
    bad = [
        f"{mod}:{i}: {line.strip()}"
        for mod, path in MODULES.items()
        if not mod.startswith(("console.operations", "console.models"))
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if writers.search(line)
    ]
    assert bad == []


@pytest.mark.parametrize("area", AREAS)
def test_each_area_has_a_public_face_and_is_used_through_it(area):
    package = importlib.import_module(f"console.{area}")
    public = set(package.__all__)
    own = {p.stem for p in (CONSOLE / area).glob("*.py") if p.stem != "__init__"}
    assert public <= own, f"console.{area}.__all__ names modules that do not exist: {public - own}"
    outside = [
        f"{mod}:{line} imports {name}"
        for mod, path in [
            *MODULES.items(),
            *((module_name(p, ROOT), p) for p in (ROOT / "tasks").glob("*.py")),
        ]
        if not mod.startswith(f"console.{area}")
        for name, line in _imports(path)
        if name.startswith(f"console.{area}.") and name.split(".")[2] not in public
    ]
    assert outside == [], f"only console.{area}.__all__ ({sorted(public)}) is for other areas"


@pytest.mark.parametrize("mod", PURE)
def test_the_pure_cores_do_no_io(mod):
    bad = [
        f"{mod}:{line} imports {name}"
        for name, line in _imports(MODULES[mod])
        if not name.startswith("__future__")
        and (name.startswith(("console", "django")) or name.split(".")[0] not in _STDLIB)
        and not PURE_MAY_IMPORT.match(name)
        and _owner(name) not in PURE
        and not _is_member_import(name)
    ]
    assert bad == []


_STDLIB = {
    "bisect",
    "collections",
    "csv",
    "dataclasses",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "math",
    "re",
    "shlex",  # quoting text for a shell script: no I/O
    "typing",
}


def _is_member_import(name: str) -> bool:
    """``from X import name`` also yields ``X.name``: judged by X."""
    parent = name.rpartition(".")[0]
    return bool(parent) and (
        parent in _STDLIB
        or parent.split(".")[0] in _STDLIB
        or PURE_MAY_IMPORT.match(parent) is not None
        or parent in PURE
    )


def test_every_module_with_an_outcome_reader_is_loaded_in_every_process():
    """The reconciler runs in beat/worker processes: a reader registered by a module nobody imports
    there is never found (its owed outcomes would stay 'unknown'). apps.py imports the listed ones."""
    from console.apps import OUTCOME_READER_MODULES

    registering = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in (ROOT / "console").rglob("*.py")
        if "register_reader(" in path.read_text() and path.name != "outcomes.py"
    }
    assert registering == set(OUTCOME_READER_MODULES)


# Change control holds the mechanics (policy, submit, approve, expiry, drift, run, break glass) and
# the review queue self-service requests share; each area declares its own held kinds in its held.py.
# It writes the audit trail and imports no area (requests builds on it, not the other way). Self-service
# requests run through the held kinds their areas declare (changes.kinds): the requests area checks,
# queues and runs a request without importing the area that does it.
@pytest.mark.parametrize(
    ("package", "may_use"),
    [("console.changes", {"audit"}), ("console.requests", {"requests", "audit"})],
    ids=["change control imports no area", "requests reach the areas only through the held kinds"],
)
def test_change_control_and_requests_import_no_area(package, may_use):
    graph = _graph()
    bad = sorted(
        f"{mod} imports {target}"
        for mod in graph
        if mod.startswith(package)
        for target in graph[mod]
        if target.split(".")[1] in set(AREAS) - may_use
    )
    assert bad == []


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_imports_another_packages_private_name():
    """``from console.x.m import _f`` or ``m._f`` from outside console.x: make it public or move it."""
    bad = []
    for mod, path in MODULES.items():
        tree, package = ast.parse(path.read_text()), ".".join(mod.split(".")[:2])
        aliases = {}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").startswith("console")
            ):
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                    if (
                        _private(a.name)
                        and not node.module.startswith(package + ".")
                        and node.module != package
                    ):
                        bad.append(f"{mod}:{node.lineno} imports {node.module}.{a.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
                target = aliases.get(node.value.id, "")
                if target in MODULES and not target.startswith(package + ".") and target != package:
                    bad.append(f"{mod}:{node.lineno} uses {target}.{node.attr}")
    assert bad == []


def test_every_module_declaring_held_kinds_is_loaded_in_every_process():
    """An approved change runs on the requests worker and is re-reviewed on approval: a held kind
    its area declares in a module nobody imports there is unknown. apps.py imports the listed ones."""
    from console.apps import HELD_MODULES

    def declares(path: Path) -> bool:
        return any(
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "register"
            and node.args
            and isinstance(node.args[0], ast.Call)
            and getattr(node.args[0].func, "id", getattr(node.args[0].func, "attr", "")) == "HeldKind"
            for node in ast.walk(ast.parse(path.read_text()))
        )

    registering = {mod for mod, path in MODULES.items() if declares(path)}
    assert registering == set(HELD_MODULES)
