"""describe_topic_partitions follows the cursor, and refuses an answer that does not move it on."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from console.kafka import KafkaOperationError
from console.kafka.topic_partitions import TopicPartitionsMixin


def _partition(i):
    return SimpleNamespace(partition_index=i, leader_id=1, leader_epoch=0, replica_nodes=[1], isr_nodes=[1],
                           eligible_leader_replicas=None, last_known_elr=None, offline_replicas=[])  # fmt: skip


def _answer(topics, cursor):
    return SimpleNamespace(
        topics=[
            SimpleNamespace(
                error_code=0, name=n, topic_id=None, is_internal=False, partitions=[_partition(i) for i in ps]
            )
            for n, ps in topics
        ],  # fmt: skip
        next_cursor=None
        if cursor is None
        else SimpleNamespace(topic_name=cursor[0], partition_index=cursor[1]),
    )


class _Kp:
    def __init__(self, answers):
        self.answers, self.sent = list(answers), []

    def send(self, request):
        self.sent.append(request)
        return self.answers.pop(0)


def _gateway(answers):
    class Stub(TopicPartitionsMixin):
        _kp = _Kp(answers)  # the request client, answering the pages given

        def _require_brokers(self, what):
            pass

    return object.__new__(Stub)


def test_a_topic_cut_between_pages_comes_back_whole_and_each_page_asks_from_the_cursor():
    gw = _gateway([_answer([("a", [0, 1])], ("a", 2)), _answer([("a", [2]), ("b", [0])], None)])
    got = gw.describe_topic_partitions(["b", "a"], page_limit=2)
    assert [p.id for p in got["a"].partitions] == [0, 1, 2] and [p.id for p in got["b"].partitions] == [0]
    assert got["a"].partitions[0].eligible_leader_replicas == ()
    first, second = gw._kp.sent
    assert first.cursor is None and (second.cursor.topic_name, second.cursor.partition_index) == ("a", 2)


def test_an_answer_whose_cursor_does_not_move_on_is_an_error_not_a_loop():
    gw = _gateway([_answer([("a", [0])], ("a", 1)), _answer([], ("a", 1))])
    with pytest.raises(KafkaOperationError, match="did not advance"):
        gw.describe_topic_partitions(["a"], page_limit=1)
