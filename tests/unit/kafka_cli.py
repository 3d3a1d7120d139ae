"""``manage.py kafka`` run in the test's process, as scripts see it: the exit code and the text."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.core.management.base import CommandError


def kafka(*args: str, stderr: bool = False) -> tuple[int, str]:
    """``manage.py kafka ARGS``: its exit code and what it wrote to stdout (and stderr when ``stderr``),
    followed by the error it ended with, on a line of its own."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("kafka", *args, stdout=out, stderr=err)
    except CommandError as exc:
        text = out.getvalue() + (err.getvalue() if stderr else "")
        return exc.returncode, text + ("\n" if text and not text.endswith("\n") else "") + str(exc)
    return 0, out.getvalue() + (err.getvalue() if stderr else "")
