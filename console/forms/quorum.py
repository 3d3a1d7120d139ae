"""Forms of the quorum area: a log-level change on one controller."""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

from console.quorum.controllers import LOG_LEVELS, RESET

# Logger names are Java class/package names (log4j), or "root".
_LOGGER = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$-]*)*$")
MAX_LOGGERS = 50


def parse_levels(text: str) -> dict[str, str]:
    """'logger=LEVEL' lines (or comma-separated) → {logger: LEVEL}; the error names the bad entry."""
    out: dict[str, str] = {}
    entries = [e.strip() for e in text.replace("\n", ",").split(",") if e.strip()]
    if len(entries) > MAX_LOGGERS:
        raise ValidationError(f"At most {MAX_LOGGERS} loggers at once.")
    for entry in entries:
        logger, sep, level = entry.partition("=")
        logger, level = logger.strip(), level.strip().upper()
        if not sep or not logger or not level:
            raise ValidationError(f"'{entry}' is not logger=LEVEL (for example org.apache.kafka.raft=DEBUG).")
        check_logger(logger)
        if level not in (*LOG_LEVELS, RESET):
            raise ValidationError(f"'{level}' in '{entry}' is not one of {', '.join((*LOG_LEVELS, RESET))}.")
        out[logger] = level
    return out


def check_logger(name: str) -> None:
    if len(name) > 255 or not _LOGGER.match(name):
        raise ValidationError(f"'{name}' is not a logger name (for example org.apache.kafka.controller).")


class LogLevelForm(forms.Form):
    """Set one logger's level (or reset it to the root level), plus optional extra lines."""

    logger = forms.CharField(
        required=False,
        max_length=255,
        widget=forms.TextInput(attrs={"placeholder": "org.apache.kafka.controller", "list": "known-loggers"}),
    )
    level = forms.ChoiceField(
        required=False,
        choices=[("", "—")] + [(lvl, lvl) for lvl in LOG_LEVELS] + [(RESET, "reset to root level")],
    )
    more = forms.CharField(
        label="More (logger=LEVEL, one a line)",
        required=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "org.apache.kafka.raft=DEBUG"}),
    )

    def clean(self) -> dict:
        data = super().clean()
        levels: dict[str, str] = {}
        logger, level = (data.get("logger") or "").strip(), data.get("level") or ""
        if logger or level:
            if not logger:
                self.add_error("logger", "Name the logger whose level to change.")
            elif not level:
                self.add_error("level", f"Pick a level for {logger}.")
            else:
                try:
                    check_logger(logger)
                    levels[logger] = level
                except ValidationError as exc:
                    self.add_error("logger", exc)
        try:
            levels.update(parse_levels(data.get("more") or ""))
        except ValidationError as exc:
            self.add_error("more", exc)
        if not levels and not self.errors:
            raise ValidationError("Give at least one logger and level.")
        data["levels"] = levels
        return data
