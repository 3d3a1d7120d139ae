"""Reading settings from the environment: the three readers every settings module uses."""

from __future__ import annotations

import os


def env_bool(name: str, default: bool = False) -> bool:
    """1, true, yes or on (any case) is True; anything else set is False; unset is the default."""
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    """A comma-separated list, items stripped, empty items dropped."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_num(name: str, default: float) -> float:
    """A number of the default's type (int or float); unset or empty is the default."""
    value = os.environ.get(name)
    return type(default)(value) if value not in (None, "") else default
