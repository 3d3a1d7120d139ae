"""The sandbox keeps its map: no import circle among sandbox/ modules.

Read from the source (ast), like tests/unit/test_layout.py does for console/: imports at module level and
inside functions count; imports under ``if TYPE_CHECKING:`` do not (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.unit.test_layout import _cycles

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "sandbox"


def _modname(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_modname(p): p for p in SANDBOX.rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of the tree except the bodies of ``if TYPE_CHECKING:`` (their ``else`` still runs)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _imports(mod: str, path: Path) -> list[str]:
    """Every dotted name a module imports at run time (module level and inside functions)."""
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            out.append(base)
            out += [f"{base}.{a.name}" for a in node.names]
    return out


def _owner(name: str) -> str | None:
    """The sandbox module a dotted import name lands in (a submodule, or the package/module above)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for mod, path in MODULES.items():
        edges = set()
        for name in _imports(mod, path):
            if name == "sandbox" or name.startswith("sandbox."):
                target = _owner(name)
                # Importing a submodule runs its packages' __init__ first: those are edges too.
                while target:
                    if target != mod and not mod.startswith(target + "."):
                        edges.add(target)
                    target = target.rpartition(".")[0]
        graph[mod] = edges
    return graph


def test_it_reads_runtime_imports_only():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from sandbox.cluster import SandboxCluster\n"
        "def f():\n    from sandbox.state import Node\n"
    )
    names = {n.module for n in _runtime_nodes(tree) if isinstance(n, ast.ImportFrom)}
    assert names == {"typing", "sandbox.state"}


def test_it_finds_no_import_circle_inside_sandbox():
    assert _cycles(_graph()) == []
