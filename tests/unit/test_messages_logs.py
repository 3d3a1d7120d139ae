"""No message content in any log line (issue 40): kafka-python's DEBUG lines print whole requests and
answers, so a Produce's records and a Fetch answer's bytes would carry message values and headers
into the logs of anyone who turns its logger up for troubleshooting. The console's filter on its
loggers (console/kafka/errlog.py) keeps the line that a request was sent, never its content."""

from __future__ import annotations

import logging
import time
import uuid

from console.clusters.actions import gateway_for

SECRET_VALUE = "value-secret-4111-1111-1111-1111"
SECRET_HEADER = "header-secret-ssn-123-45-6789"


def test_it_logs_no_produced_or_fetched_content_at_debug(sandbox, kafka_cluster, debug_logs):
    topic = f"logs-{uuid.uuid4().hex[:8]}"
    sandbox.create_topic(topic, 1, 1)
    gw = gateway_for(kafka_cluster)
    written = gw.produce_record(
        topic, partition=0, key=b"k", value=SECRET_VALUE.encode(), headers=[("trace", SECRET_HEADER.encode())]
    )
    read = gw.read_records(topic, {0: 0}, max_records=5, max_bytes=1 << 20, deadline_s=time.monotonic() + 5)
    assert [r.value for r in read[0].records] == [SECRET_VALUE.encode()] and written.offset == 0
    kafka_lines = [r for r in debug_logs.records if r.name.startswith("kafka")]
    assert any(r.levelno == logging.DEBUG for r in kafka_lines)  # kafka-python's DEBUG lines were on
    text = debug_logs.text
    for secret in (SECRET_VALUE, SECRET_HEADER, SECRET_VALUE.encode().hex()):
        assert secret not in text
