"""Audit action names are constants of their area, never strings written at the call.

Every call that names an audit action (``audit.record(action=...)``, ``outcomes.requested``,
``settle``, ``record_refusal``, an area's own wrappers, ``@refused_as(...)``,
``register_reader(...)``) takes it from the area's ``audit_names`` module (or a name the module
declares), so one action has one name: a reviewer filtering the trail finds its requested,
outcome and refused events under it.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "console"

# Not converted yet: the lead shrinks this list as those packages take their names from an
# audit_names module of their own.
NOT_YET = (
    "console/api/",  # helper A (refused API requests: audit.refusals.record_refused_request)
)
# Calls whose ``action=`` is something else: argparse, query filters, the audit filter form.
NOT_AUDIT = {"add_argument", "set_defaults", "filter", "exclude", "get", "AuditFilter", "AuditEvent"}
# Calls whose first argument is an action name.
FIRST_ARG = {"refused_as", "register_reader"}
NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _literals(expr: ast.expr) -> list[str]:
    """The string literals in an action expression (parts of an f-string too)."""
    return [n.value for n in ast.walk(expr) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def literal_actions(source: str, where: str) -> list[str]:
    """``where:line`` of every call in ``source`` that names its audit action with a string literal."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        callee = _callee(node)
        named = [k.value for k in node.keywords if k.arg == "action" and callee not in NOT_AUDIT]
        if callee in FIRST_ARG and node.args:
            named.append(node.args[0])
        found += [f"{where}:{node.lineno} {callee}({ast.unparse(e)})" for e in named if _literals(e)]
    return found


def _console_modules() -> list[Path]:
    return sorted(p for p in CONSOLE.rglob("*.py") if "migrations" not in p.parts)


def test_it_finds_a_literal_action_name():
    source = """
audit.record(actor=a, action="topic.create", outcome="success")
outcomes_log.requested(actor=a, action="topic.delete" if x else names.TOPIC_DELETE)
record_refusal(actor=a, action=f"http.{name}", cluster=None, exc=e)
@refused_as("topic.create", PolicyViolation)
def f(): ...
outcomes_log.register_reader("config.alter", reread)
audit.record(actor=a, action=names.TOPIC_CREATE, outcome="success")
parser.add_argument("--x", action="store_true")
AuditEvent.objects.filter(action="topic.create")
"""
    assert [hit.split(" ", 1)[0] for hit in literal_actions(source, "m.py")] == [
        "m.py:2",
        "m.py:3",
        "m.py:4",
        "m.py:5",
        "m.py:7",
    ]


def test_it_finds_no_literal_action_name_in_the_converted_areas():
    found = []
    for path in _console_modules():
        where = path.relative_to(ROOT).as_posix()
        if where.startswith(NOT_YET):
            continue
        found += literal_actions(path.read_text(), where)
    assert found == []


def test_the_allow_list_names_only_what_still_writes_literal_names():
    """An entry whose code no longer writes a literal name is done: drop it from NOT_YET."""
    left = {
        prefix: [
            hit
            for path in _console_modules()
            if (where := path.relative_to(ROOT).as_posix()).startswith(prefix)
            for hit in literal_actions(path.read_text(), where)
        ]
        for prefix in NOT_YET
        if any(ROOT.joinpath(prefix).glob("*.py")) or ROOT.joinpath(prefix).is_file()
    }
    assert [prefix for prefix, hits in left.items() if not hits] == []


def _declared() -> dict[str, list[str]]:
    """Every name declared by an ``audit_names`` module: value -> the modules declaring it."""
    values: dict[str, list[str]] = {}
    for path in sorted(CONSOLE.rglob("audit_names.py")):
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for attr, value in vars(module).items():
            if attr.isupper() and isinstance(value, str):
                values.setdefault(value, []).append(f"{module.__name__}.{attr}")
    return values


def test_every_area_name_is_dotted_lowercase_and_declared_once():
    declared = _declared()
    stages = {"requested", "cancel", "reopened"}  # an Operation's stages: appended to its kind
    assert [v for v in declared if v not in stages and not NAME.match(v)] == []
    assert {v: where for v, where in declared.items() if len(where) > 1} == {}
