"""Imported by a race test's Celery workers (``--include tests.race_worker``): declares ``test.race``."""

from __future__ import annotations

from console.operations import register
from tests.race_kind import RACE

register(RACE)
