"""Regular expressions typed by users, matched in linear time.

Topic search and policy patterns use RE2 (google-re2): no backtracking, so no pattern can pin a
web worker (a backtracking engine doubles its time per character on patterns like ``(a+)+$``).
RE2 refuses what it cannot match in linear time (backreferences, lookaround): that is a clear
``PatternError``, not a hang.
"""

from __future__ import annotations

import re2

MAX_PATTERN_LENGTH = 500
MAX_MEMORY = 8 << 20  # bytes RE2 may use to compile one pattern


class PatternError(ValueError):
    """The pattern is not a regular expression RE2 accepts (the message says why)."""


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = MAX_MEMORY
    return options


def compile_pattern(text: str):
    """Compile a user's pattern (``search``/``fullmatch`` as with ``re``), or raise PatternError."""
    if len(text) > MAX_PATTERN_LENGTH:
        raise PatternError(f"the pattern is longer than {MAX_PATTERN_LENGTH} characters")
    try:
        return re2.compile(text, options=_options())
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)) from None


def fullmatch(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).fullmatch(text) is not None
