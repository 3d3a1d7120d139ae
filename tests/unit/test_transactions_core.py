"""The transactions area's pure rules: filters checked, a page built from the plain rows, the hanging
rule as ``kafka-transactions.sh find-hanging`` applies it, and the abort's target found by its start
offset as ``kafka-transactions.sh abort`` finds it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from console.transactions import core
from console.transactions.core import OpenTxn, TxnInputError


@dataclass(frozen=True)
class State:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    txn_start_offset: int


@dataclass(frozen=True)
class Described:
    partitions: tuple[tuple[str, int], ...]


NOW = 10_000_000_000
MIN = 60_000


def test_it_checks_the_state_filters():
    assert core.check_states(["Ongoing", " Empty ", "", "Ongoing"]) == ["Ongoing", "Empty"]
    with pytest.raises(TxnInputError, match="unknown transaction state.*Running"):
        core.check_states(["Ongoing", "Running"])


@pytest.mark.parametrize("value", [None, "", True, "1.5", "x", -1])
def test_it_refuses_what_is_not_a_whole_number_in_range(value):
    with pytest.raises(TxnInputError):
        core.whole(value, "start offset")


def test_it_checks_the_abort_target_and_names_every_problem():
    assert core.check_partition_target("t", "2", 40) == ("t", 2, 40)
    with pytest.raises(TxnInputError) as exc:
        core.check_partition_target("", -1, "x")
    assert len(exc.value.errors) == 3


def test_a_page_builds_only_its_rows_and_a_page_past_the_end_is_the_last():
    rows = [(f"tx-{i:03d}", 1, i, "Ongoing") for i in range(250)]
    shown, page, pages = core.page_of(rows, 2, 100)
    assert (len(shown), page, pages) == (100, 2, 3)
    assert shown[0] == core.Transaction("tx-100", 1, 100, "Ongoing")
    shown, page, pages = core.page_of(rows, 9, 100)
    assert (len(shown), page, shown[-1].transactional_id) == (50, 3, "tx-249")
    assert core.page_of([], 1, 100) == ([], 1, 1)


def test_open_transactions_are_the_producers_with_a_start_offset():
    found = core.open_transactions(
        "t", {0: [State(7, 0, 3, NOW, -1, 12), State(8, 1, 0, NOW, 2, -1)], 1: [State(9, 2, 0, NOW, 4, 0)]}
    )
    assert [(t.partition, t.producer_id, t.start_offset) for t in found] == [(0, 7, 12), (1, 9, 0)]


def _open(pid, partition=0, age_min=20, topic="t"):
    return OpenTxn(topic, partition, pid, 0, -1, 5, NOW - age_min * MIN)


def test_candidates_are_strictly_older_than_the_timeout_measured_from_the_last_timestamp():
    young, edge, old = _open(1, age_min=10), _open(2, age_min=15), _open(3, age_min=16)
    assert core.candidates([young, edge, old], NOW, 15 * MIN) == [old]
    assert core.candidates([young, edge, old], NOW, 5 * MIN) == [young, edge, old]


def test_hanging_is_no_transactional_id_no_transaction_or_a_transaction_without_the_partition():
    no_id, not_found, elsewhere, still_owed = _open(1), _open(2), _open(3, partition=1), _open(4, partition=2)
    ids = {2: "tx-gone", 3: "tx-other", 4: "tx-owed"}
    described = {"tx-gone": None, "tx-other": Described((("t", 0),)), "tx-owed": Described((("t", 2),))}
    got = core.hanging([no_id, not_found, elsewhere, still_owed], ids, described)
    assert got == [no_id, not_found, elsewhere]  # the coordinator still owes tx-owed's partition a marker


def test_the_abort_finds_the_producer_by_its_exact_start_offset():
    states = [State(7, 3, 9, NOW, -1, 12), State(8, 1, 0, NOW, 5, 40), State(9, 0, 0, NOW, 2, -1)]
    spec = core.abort_spec("t", 0, 12, states)
    assert spec == core.AbortSpec("t", 0, 7, 3, 0, 12)  # coordinator epoch -1 (unknown) is sent as 0
    assert core.abort_spec("t", 0, 40, states).coordinator_epoch == 5
    refused = core.abort_spec("t", 0, 13, states)
    assert refused == (
        "Could not find any open transactions starting at offset 13 on partition t-0 "
        "(open transactions start at 12, 40)"
    )
    assert "none is open" in core.abort_spec("t", 0, 0, [states[2]])


def test_the_pin_is_the_partitions_open_transactions():
    states = [State(8, 1, 0, NOW, 5, 40), State(7, 3, 9, NOW, -1, 12), State(9, 0, 0, NOW, 2, -1)]
    assert core.pin(states) == "7/3@12,8/1@40"
    assert core.pin(states[2:]) == "none open"
