"""An import graph of a package tree read from the source (ast), and the import circles in it.

tests/unit/test_layout.py (console/) and tests/sandbox/test_layout_sandbox.py (sandbox/) build theirs
with it: a module's edges are the modules it imports (at module level and inside functions) and the
packages above them, whose ``__init__`` runs first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted import name lands in (a submodule, or the package/module above)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def graph(
    modules: dict[str, Path],
    imports: Callable[[str, Path], Iterable[str]],
    top: str,
    *,
    with_top: bool = False,
) -> dict[str, set[str]]:
    """Each module's edges to the modules of ``top`` it imports (``imports(mod, path)``: dotted names);
    ``with_top``: the top package itself is a module with edges too."""
    out: dict[str, set[str]] = {}
    for mod, path in modules.items():
        edges = set()
        for name in imports(mod, path):
            if name == top or name.startswith(top + "."):
                target = owner(name, modules)
                # Importing a submodule runs its packages' __init__ first: those are edges too.
                while target and (with_top or target != top):
                    if target != mod and not mod.startswith(target + "."):
                        edges.add(target)
                    target = target.rpartition(".")[0]
        out[mod] = edges
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
