"""Change windows as plain data (console/windows/core.py): one-off and weekly windows in a named time
zone, which one is in force, the next moment a change may run, and the refusal's wording."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from console.windows import core


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


FREEZE = core.Spec(1, core.FREEZE, "year end", utc(2026, 12, 20, 0, 0), until=utc(2027, 1, 4, 8, 0))
# every Tuesday 02:00-04:00 Paris time (01:00 UTC in winter, 00:00 UTC in summer)
WEEKLY = core.Spec(
    2,
    core.MAINTENANCE,
    "tuesday night",
    utc(2026, 1, 1),
    weekday=1,
    start_time=time(2, 0),
    duration=timedelta(hours=2),
    time_zone="Europe/Paris",
)


def test_it_finds_a_one_off_freeze_in_force_only_inside_its_interval():
    assert core.in_force([FREEZE], core.FREEZE, utc(2026, 12, 19, 23, 59)) is None
    found = core.in_force([FREEZE], core.FREEZE, utc(2026, 12, 20, 0, 0))
    assert (found.window.id, found.start, found.end) == (1, utc(2026, 12, 20), utc(2027, 1, 4, 8, 0))
    assert core.in_force([FREEZE], core.FREEZE, utc(2027, 1, 4, 8, 0)) is None  # the end is open
    assert core.in_force([FREEZE], core.MAINTENANCE, utc(2026, 12, 25)) is None


@pytest.mark.parametrize(
    ("at", "start_utc"),
    [
        (utc(2026, 11, 24, 1, 30), utc(2026, 11, 24, 1, 0)),  # winter: 02:00 Paris = 01:00 UTC
        (utc(2026, 7, 7, 0, 30), utc(2026, 7, 7, 0, 0)),  # summer: 02:00 Paris = 00:00 UTC
    ],
    ids=["winter", "summer"],
)
def test_it_keeps_a_weekly_window_at_its_local_time_across_daylight_saving(at, start_utc):
    found = core.in_force([WEEKLY], core.MAINTENANCE, at)
    assert (found.start, found.end) == (start_utc, start_utc + timedelta(hours=2))
    assert core.in_force([WEEKLY], core.MAINTENANCE, start_utc + timedelta(hours=2)) is None
    assert core.in_force([WEEKLY], core.MAINTENANCE, start_utc - timedelta(days=1)) is None


def test_it_lists_the_weekly_occurrences_clipped_to_the_window_and_an_early_end():
    ended = core.Spec(**{**WEEKLY.__dict__, "until": utc(2026, 12, 8, 1, 30)})
    got = [(o.start, o.end) for o in core.occurrences(ended, utc(2026, 11, 23), utc(2026, 12, 31))]
    assert got == [
        (utc(2026, 11, 24, 1), utc(2026, 11, 24, 3)),
        (utc(2026, 12, 1, 1), utc(2026, 12, 1, 3)),
        (utc(2026, 12, 8, 1), utc(2026, 12, 8, 1, 30)),  # ended early, mid-window
    ]


def test_it_says_why_a_change_may_not_run_and_when_it_next_may():
    specs = [FREEZE, WEEKLY]
    why = core.refusal(specs, utc(2026, 12, 25), maintenance_only=False)
    assert isinstance(why, core.Occurrence) and why.window.id == 1
    assert core.refusal(specs, utc(2026, 12, 1, 12), maintenance_only=False) is None
    assert "only inside a maintenance window" in core.refusal(
        specs, utc(2026, 12, 1, 12), maintenance_only=True
    )
    assert core.next_allowed(
        specs, utc(2026, 12, 25), maintenance_only=False, horizon=timedelta(days=30)
    ) == utc(2027, 1, 4, 8, 0)
    # maintenance only: the first Tuesday 02:00 Paris after the freeze (Monday 4 January 08:00 UTC)
    assert core.next_allowed(
        specs, utc(2026, 12, 25), maintenance_only=True, horizon=timedelta(days=30)
    ) == utc(2027, 1, 5, 1, 0)
    assert (
        core.next_allowed([FREEZE], utc(2026, 12, 25), maintenance_only=True, horizon=timedelta(days=30))
        is None
    )


def test_it_names_the_window_and_its_end_in_the_refusal():
    why = core.in_force([FREEZE], core.FREEZE, utc(2026, 12, 25))
    assert core.refusal_text("prod", why) == (
        "Cluster 'prod' is frozen by window #1 (year end) until 2027-01-04 08:00 UTC: no changes until then, "
        "except break glass by an admin with a written justification."
    )
    assert core.describe(WEEKLY) == "every Tuesday 02:00 Europe/Paris for 120 min"
    with pytest.raises(ValueError, match="unknown time zone 'Mars/Olympus'"):
        core.zone("Mars/Olympus")
