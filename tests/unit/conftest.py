"""Fixtures the unit tests of several areas share (the suite-wide ones are in tests/conftest.py)."""

from __future__ import annotations

import logging
import uuid

import pytest

from console.topics import actions as topics
from console.topics.batch import TopicSpec


@pytest.fixture
def topic(personas, kafka_cluster) -> str:
    """A new one-partition topic with ``retention.ms`` 1000, created by the operator (a module that needs
    another kind of topic names its own ``topic``)."""
    name = f"t.{uuid.uuid4().hex[:10]}"
    topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[TopicSpec(name, 1, 1, configs={"retention.ms": "1000"})],
    )
    return name


@pytest.fixture
def gateway_calls():
    """The names of the gateway methods called while the test runs (outermost calls, as /metrics counts)."""
    from console.kafka import CALL_OBSERVERS

    seen: list[str] = []

    def spy(conn, name, seconds, error) -> None:
        seen.append(name)

    CALL_OBSERVERS.append(spy)
    yield seen
    CALL_OBSERVERS.remove(spy)


@pytest.fixture
def debug_logs(caplog):
    """Every logger at DEBUG, kafka-python's too (the console's settings keep it at WARNING)."""
    kafka_logger = logging.getLogger("kafka")
    level = kafka_logger.level
    kafka_logger.setLevel(logging.DEBUG)
    caplog.set_level(logging.DEBUG)
    yield caplog
    kafka_logger.setLevel(level)
