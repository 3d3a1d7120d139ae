"""The sandbox keeps its map: no import circle among sandbox/ modules.

Read from the source (ast), like tests/unit/test_layout.py does for console/: imports at module level and
inside functions count; imports under ``if TYPE_CHECKING:`` do not (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.import_graph import cycles, graph, module_name

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "sandbox"


MODULES = {module_name(p, ROOT): p for p in SANDBOX.rglob("*.py")}


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


def _graph() -> dict[str, set[str]]:
    return graph(MODULES, _imports, "sandbox", with_top=True)


def test_it_reads_runtime_imports_only():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from sandbox.cluster import SandboxCluster\n"
        "def f():\n    from sandbox.state import Node\n"
    )
    names = {n.module for n in _runtime_nodes(tree) if isinstance(n, ast.ImportFrom)}
    assert names == {"typing", "sandbox.state"}


def test_it_finds_no_import_circle_inside_sandbox():
    assert cycles(_graph()) == []
