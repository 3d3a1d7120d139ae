"""``manage.py kafka scram list|set|delete``: ``kafka-configs.sh --entity-type users`` SCRAM
credentials over the SCRAM users area (admin only).

The password is never an argument (argv is visible to every user of the machine and kept in shell
histories): ``set`` asks for it twice at a prompt (no echo), or reads it from ``--password-file``
(its first line; ``-`` for standard input). ``--iterations`` defaults to the console's 8192.
"""

from __future__ import annotations

import getpass
import sys

from django.core.management.base import CommandError

from console.management.cli.base import FAILED, OK, USAGE, common, holdable, read_text
from console.scram import actions, core, held, reads

RESULT_COLUMNS = ["user", "mechanism", "op", "iterations", "ok", "message"]


def add_parsers(area) -> None:
    sub = area.add_parser("scram", help="list, set, delete (SCRAM users, KIP-554)").add_subparsers(
        dest="action", required=True
    )
    common(sub.add_parser("list", help="users with their SCRAM mechanisms and iterations"))
    p = sub.add_parser(
        "set", help="create or rotate a user's credential (the password from a prompt or a file)"
    )
    common(p)
    p.add_argument("user")
    p.add_argument("--mechanism", choices=core.MECHANISMS, default="SCRAM-SHA-512")
    p.add_argument("--iterations", type=int, default=core.DEFAULT_ITERATIONS)
    p.add_argument(
        "--password-file",
        metavar="PATH",
        help="read the password from the first line of this file ('-': standard input); default: a prompt",
    )
    holdable(p)
    p = sub.add_parser("delete", help="delete one credential of a user")
    common(p)
    p.add_argument("user")
    p.add_argument("--mechanism", choices=core.MECHANISMS, required=True)
    holdable(p)


def _password(path: str | None, stdin) -> str:
    """The password from the file (first line, its newline dropped) or typed twice at a prompt."""
    if path:
        text = read_text(path, stdin)
        return text.split("\n", 1)[0].removesuffix("\r")
    if not sys.stdin.isatty():
        raise CommandError(
            "No terminal to ask the password at: give --password-file PATH (or '-').", returncode=USAGE
        )
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != first:
        raise CommandError("The two passwords differ.", returncode=USAGE)
    return first


class Commands:
    def _scram_list(self, cluster, actor) -> int:
        users = reads.list_users(actor=actor, cluster=cluster)
        rows = [
            {"user": u.name, "mechanism": c.mechanism, "iterations": c.iterations}
            for u in users
            for c in u.credentials
        ]
        self._emit(rows, ["user", "mechanism", "iterations"])
        return OK

    def _scram_set(self, cluster, actor) -> int:
        o = self.opts
        password = _password(o.get("password_file"), o.get("stdin") or sys.stdin)
        change = {
            "user": o["user"],
            "mechanism": o["mechanism"],
            "iterations": o["iterations"],
            "password": password,
        }
        result = self._run_or_hold(
            cluster,
            actor,
            held.GATE,
            lambda: held.prepare_set(actor, cluster, **change),
            lambda: actions.set_credential(actor=actor, cluster=cluster, **change),
        )
        self._emit([{k: v for k, v in result.as_json().items() if k in RESULT_COLUMNS}], RESULT_COLUMNS)
        return OK if result.ok else FAILED

    def _scram_delete(self, cluster, actor) -> int:
        o = self.opts
        change = {"user": o["user"], "mechanism": o["mechanism"]}
        result = self._run_or_hold(
            cluster,
            actor,
            held.GATE,
            lambda: held.prepare_delete(actor, cluster, **change),
            lambda: actions.delete_credential(actor=actor, cluster=cluster, **change),
        )
        self._emit([{k: v for k, v in result.as_json().items() if k in RESULT_COLUMNS}], RESULT_COLUMNS)
        return OK if result.ok else FAILED
