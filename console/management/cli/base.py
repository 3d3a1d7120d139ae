"""What every ``manage.py kafka`` sub-command shares: exit codes, common options, output, errors.

Exit codes (stable, for scripts):
  0  everything asked for succeeded (or validated)
  1  Kafka refused some or all resources (the per-resource table says which); a broken audit chain
  2  usage error (bad arguments; a change without --as USER; --as naming the system actor)
  3  permission denied (also: the cluster's change control holds this action for approval)
  4  refused before reaching Kafka: policy violation, invalid input, unconfirmed delete
  5  Kafka could not be asked (unreachable, timeout, authorization) — nothing is known to have changed
  6  not found: cluster, user, topic, group, request or reassignment
  7  the console's database refused the "requested" audit event: nothing was sent to Kafka
  8  still running (``reassign --verify`` of a reassignment that has not finished yet)
  9  drift: ``estate plan`` found the cluster different from the file
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError

from console import access, refusals
from console.changes import door
from console.management.actors import command_actor
from console.management.cli.parsing import kafka_tool_options
from console.models import Cluster

# The exit codes are the refusal table's (console/refusals.py); the sub-commands name them from here.
OK, FAILED, USAGE, IN_PROGRESS = refusals.OK, refusals.FAILED, refusals.USAGE, refusals.IN_PROGRESS
DENIED, REFUSED, KAFKA, NOT_FOUND = refusals.DENIED, refusals.REFUSED, refusals.KAFKA, refusals.NOT_FOUND
AUDIT_UNAVAILABLE = refusals.AUDIT_UNAVAILABLE

# The sub-commands that can change nothing: only these may run without --as, as the system actor
# (which may view every cluster). Everything else names a person, so change control holds what it
# should and the audit says who: the system actor's own changes are never held.
READS = frozenset(
    {
        ("topics", "list"),
        ("topics", "describe"),
        ("cluster", "describe"),
        ("configs", "describe"),
        ("groups", "list"),
        ("groups", "describe"),
        ("share-groups", "list"),
        ("share-groups", "describe"),
        ("log-dirs", "describe"),
        ("log-dirs", "status"),
        ("acls", "list"),
        ("acls", "effective"),
        ("acls", "export"),
        ("features", "describe"),
        ("quorum", "describe"),
        ("fleet", "show"),
        ("estate", "export"),
        ("estate", "plan"),
        ("alerts", "list"),
        ("alerts", "silences"),
        ("alerts", "rules"),
        ("windows", "list"),
        ("windows", "calendar"),
        ("quotas", "list"),
        ("quotas", "effective"),
        ("transactions", "list"),
        ("transactions", "describe"),
        ("transactions", "describe-producers"),
        ("transactions", "find-hanging"),
    }
)


# The client libraries' loggers (and the gateway's): their warnings about connections are the
# libraries' business; the command says what failed in its own words and exit code.
LIBRARY_LOGGERS = ("kafka", "asyncio", "confluent_kafka", "console.kafka")


_SILENT = logging.NullHandler()


def _silence(verbosity: int) -> list[tuple[logging.Logger, bool]]:
    """Keep the libraries' records off the output (a handler of their own that drops them, so that
    neither the root's handler nor logging's last-resort one prints them); what to restore."""
    if verbosity >= 2:
        return []
    changed = []
    for logger in (logging.getLogger(name) for name in LIBRARY_LOGGERS):
        changed.append((logger, logger.propagate))
        logger.propagate = False  # their records still count in console/kafka/errlog.py's runs
        logger.addHandler(_SILENT)
    return changed


@contextmanager
def quiet_libraries(verbosity: int) -> Iterator[None]:
    """While a command runs, the client libraries' log stays off its output (stdout/stderr) unless
    ``-v 2`` or more asks for it; their settings come back afterwards."""
    changed = _silence(verbosity)
    try:
        yield
    finally:
        for logger, propagate in changed:
            logger.propagate = propagate
            logger.removeHandler(_SILENT)


def common(p, *, formats: tuple[str, ...] = ("table", "json"), cluster: bool = True) -> None:
    """--cluster, --as and --output, on every sub-command."""
    if cluster:
        p.add_argument("--cluster", help="registered cluster name (default: the only one)")
    p.add_argument(
        "--as",
        dest="actor",
        help="acting console user; required unless the sub-command only reads (which then reads as the "
        "system actor console-system)",
    )
    p.add_argument("--output", choices=formats, default="table")
    kafka_tool_options(p)


def holdable(p) -> None:
    """The change-control choices of a sub-command whose action a cluster's policy can hold."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--submit-for-approval",
        dest="hold_reason",
        metavar="REASON",
        help="where the cluster's change control holds this action: submit it with its dry run for "
        "approval (the reason is shown to the approvers); where nothing holds it, it runs",
    )
    g.add_argument(
        "--break-glass",
        metavar="JUSTIFICATION",
        help="admins, where change control holds this action: run it now with a written justification "
        "(audited, flagged, the approvers are told)",
    )


def read_text(path: str, stdin=None) -> str:
    """A file's text ('-' = stdin); an unreadable file is a usage error."""
    if path == "-" and stdin is not None:
        return stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"Cannot read {path}: {exc}", returncode=USAGE) from None


class HeldInstead(Exception):
    """The action was held for approval (or broke glass) instead of running: the command ends by
    showing the held change."""

    def __init__(self, change):
        super().__init__(f"change #{change.pk}")
        self.change = change


class CommandBase:
    """The plumbing of ``manage.py kafka`` (mixed into its BaseCommand)."""

    def execute(self, *args, **options):
        verbosity = int(options.get("verbosity", 1))
        if getattr(self, "_called_from_command_line", False):
            _silence(verbosity)  # the process is this command: its clients' threads may log until it exits
            return super().execute(*args, **options)
        with quiet_libraries(verbosity):
            return super().execute(*args, **options)

    def handle(self, *args, **opts) -> None:
        self.opts = opts
        actor = self._actor(opts.get("actor"), opts["area"], opts["action"])
        cluster = self._cluster(opts.get("cluster")) if opts.get("needs_cluster", True) else None
        handler = getattr(self, f"_{opts['area']}_{opts['action'].replace('-', '_')}")
        try:
            code = handler(cluster, actor)
        except HeldInstead as held:
            code = self._held(held.change)
        except Exception as exc:
            refused = refusals.answer(exc)
            if refused is None:
                raise  # no refusal: a bug, with its traceback
            raise CommandError(refused.text, returncode=refused.exit) from None
        if code == IN_PROGRESS:
            raise CommandError("Still in progress: run --verify again later.", returncode=code)
        if code == REFUSED:
            raise CommandError(
                "Refused by the console before reaching Kafka (see above): nothing was sent for those.",
                returncode=code,
            )
        if code:
            raise CommandError("Kafka refused some of the request (see above).", returncode=code)

    def _run_or_hold(self, cluster, actor, kind: str, prepare, run):
        """Through the change-control door (console/changes/door.py), as pages and API do: the action's
        result when it ran. With --submit-for-approval / --break-glass a held action is held or breaks
        glass instead, and the command ends there showing the held change (``HeldInstead``). Without
        either, a held action is refused (exit 3)."""
        o = self.opts
        mode = door.BREAK_GLASS if o.get("break_glass") else door.HOLD if o.get("hold_reason") else door.RUN
        text = o.get("break_glass") or o.get("hold_reason") or ""
        outcome = door.run_or_hold(
            actor=actor, cluster=cluster, kind=kind, prepare=prepare, run=run, mode=mode, text=text
        )
        if outcome.held is not None:
            raise HeldInstead(outcome.held)
        return outcome.result

    def _held(self, req) -> int:
        """A held change as the command line shows it; break glass that failed exits 1."""
        row = {
            "change": req.pk,
            "kind": req.kind,
            "resource": req.resource,
            "state": req.state,
            "approvals_required": req.approvals_required,
            "message": (req.result or {}).get("message", ""),
        }
        self._emit([row], list(row), {"held": True})
        if self.opts["output"] == "table":
            self.stdout.write(
                f"Change #{req.pk} is held for approval: {req.approvals_required} approver(s) other than you "
                f"(manage.py kafka requests show {req.pk})."
                if req.state == "pending"
                else f"Break glass: change #{req.pk} {req.state}; the approvers are told."
            )
        return FAILED if req.state == "failed" else OK

    def _cluster(self, name: str | None) -> Cluster:
        if name:
            cluster = Cluster.objects.filter(name=name).first()
            if cluster is None:
                raise CommandError(f"No cluster named '{name}' is registered.", returncode=NOT_FOUND)
            return cluster
        clusters = list(Cluster.objects.all()[:2])
        if len(clusters) != 1:
            raise CommandError(
                "Name the cluster with --cluster.", returncode=USAGE if clusters else NOT_FOUND
            )
        return clusters[0]

    def _actor(self, username: str | None, area: str, action: str):
        """The --as user; the system actor only for a read without --as, never when named."""
        if not username and (area, action) not in READS:
            what = area if action == "run" else f"{area} {action}"
            raise CommandError(
                f"'{what}' changes or can change something: say who is acting with --as USER (a console "
                "user with that permission). The command line never acts as the system actor "
                f"{access.SYSTEM_USERNAME}, whose actions change control does not hold.",
                returncode=USAGE,
            )
        user = command_actor(username, returncode=NOT_FOUND)
        if username and access.is_system(user):
            raise CommandError(
                f"--as cannot name the system actor {access.SYSTEM_USERNAME}: name the person acting (its "
                "actions are never held by change control).",
                returncode=USAGE,
            )
        return user

    def _emit(self, rows: list[dict], columns: list[str], extra: dict | None = None) -> None:
        """The rows as an aligned table, a JSON document ({...extra, "items": rows}) or CSV."""
        output = self.opts["output"]
        if output == "json":
            self.stdout.write(json.dumps({**(extra or {}), "items": rows}, indent=2, default=str))
            return
        if output == "csv":
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
            self.stdout.write(out.getvalue(), ending="")
            return
        widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in rows]) for c in columns}
        self.stdout.write("  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip())
        for r in rows:
            self.stdout.write("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns).rstrip())

    def _say(self, text: str) -> None:
        """A line for people: on stdout with the table, on stderr when stdout is JSON or CSV."""
        (self.stdout if self.opts["output"] == "table" else self.stderr).write(text)
