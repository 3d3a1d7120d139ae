"""The log-level form: one logger and level, or logger=LEVEL lines."""

from __future__ import annotations

from console.forms.quorum import LogLevelForm


def test_it_takes_one_logger_and_level():
    form = LogLevelForm({"logger": "kafka.raft", "level": "DEBUG"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["levels"] == {"kafka.raft": "DEBUG"}


def test_it_takes_lines_and_merges_them():
    form = LogLevelForm(
        {"logger": "kafka.raft", "level": "DEBUG", "more": "org.apache.kafka.controller=warn\nroot=INFO"}
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["levels"] == {
        "kafka.raft": "DEBUG",
        "org.apache.kafka.controller": "WARN",
        "root": "INFO",
    }


def test_it_needs_something():
    form = LogLevelForm({})
    assert not form.is_valid()
    assert "at least one logger" in str(form.errors)


def test_it_names_a_bad_line():
    form = LogLevelForm({"more": "kafka.raft=LOUD"})
    assert not form.is_valid()
    assert "'LOUD' in 'kafka.raft=LOUD'" in form.errors["more"][0]


def test_it_needs_a_level_for_a_logger():
    form = LogLevelForm({"logger": "kafka.raft"})
    assert not form.is_valid() and "Pick a level" in str(form.errors["level"])


def test_it_refuses_a_logger_name_with_spaces():
    form = LogLevelForm({"logger": "kafka raft", "level": "INFO"})
    assert not form.is_valid() and "not a logger name" in str(form.errors["logger"])
