"""Topic search over one snapshot's names: substring (case-insensitive) and regular expression (RE2).

A ``NameIndex`` is built once per metadata snapshot (``cache.Snapshot.search_index``): the names
lower-cased for the substring search, and all names joined into one newline-separated byte string
for the regex search. One RE2 scan of the joined text replaces 20,000 per-name calls (each call
through the binding costs more than the scan of the name itself).

Why the joined scan gives exactly the per-name answer: the pattern is compiled with RE2's
``never_nl`` (no match ever contains a newline, whatever the pattern says) and in multi-line mode
(``^``/``$`` match at each name's start and end, as they do on a single name), so every match lies
inside one name, and a name matches the joined text exactly where ``pattern.search(name)`` finds a
match. After a hit, the scan resumes at the next name. ``\\A`` and ``\\z`` (start/end of the whole
text) and flag groups that could turn multi-line mode off keep the per-name search.
"""

from __future__ import annotations

import re
from bisect import bisect_right

import re2

from console import patterns

# \A or \z anywhere, or an inline flag group that clears a flag ((?-m), (?i-m:...)): per-name search.
_PER_NAME_ONLY = re.compile(r"\\[Az]|\(\?[a-zA-Z]*-")


def _joined_options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = patterns.MAX_MEMORY
    options.never_nl = True
    return options


class NameIndex:
    """Sorted topic names prepared for search (immutable once built)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.lower = [n.lower() for n in names]
        encoded = [n.encode() for n in names]
        self.text = b"\n".join(encoded)
        starts, pos = [], 0
        for b in encoded:
            starts.append(pos)
            pos += len(b) + 1
        self.starts = starts  # byte offset of each name in ``text``

    def substring(self, needle: str) -> list[str]:
        """Names containing ``needle``, ignoring case, in name order."""
        needle = needle.lower()
        return [n for n, low in zip(self.names, self.lower, strict=True) if needle in low]

    def regex(self, text: str) -> list[str]:
        """Names where the RE2 pattern ``text`` finds a match, in name order.

        Raises ``patterns.PatternError`` for a pattern RE2 refuses.
        """
        pattern = patterns.compile_pattern(text)  # the user's own pattern: validation and its message
        names = self.names
        if not names:
            return []
        if _PER_NAME_ONLY.search(text):
            return [n for n in names if pattern.search(n) is not None]
        try:
            joined = re2.compile(f"(?m)(?:{text})".encode(), options=_joined_options())
        except re2.error:  # not expected for a pattern that compiled alone; the per-name search is exact
            return [n for n in names if pattern.search(n) is not None]
        search, blob, starts = joined.search, self.text, self.starts
        end, count = len(blob), len(names)
        out, pos = [], 0
        while pos <= end:
            m = search(blob, pos)
            if m is None:
                break
            i = bisect_right(starts, m.start()) - 1
            out.append(names[i])
            if i + 1 >= count:
                break
            pos = starts[i + 1]
        return out


def matching_names(index: NameIndex, query: str, regex: bool) -> list[str]:
    """The names a list search keeps (raises ``patterns.PatternError`` for an invalid regex)."""
    return index.regex(query) if regex else index.substring(query)
