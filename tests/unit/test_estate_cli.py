"""``manage.py kafka estate export|plan|apply`` against the sandbox: export to a file, plan with the
documented exit codes (0 no drift, 9 drift, 4 a bad file or what Kafka cannot do), apply submits
one held change and prints its id."""

from __future__ import annotations

import json

import pytest
import yaml

from console.models.requests import ChangeRequest, RequestState
from tests.unit.estate_world import drop_namespaces, make_namespace  # noqa: F401 - the fixture
from tests.unit.kafka_cli import kafka

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def test_it_exports_plans_and_submits_with_distinct_exit_codes(personas, kafka_cluster, tmp_path):
    ns = make_namespace(personas, kafka_cluster, 3)
    path = tmp_path / "estate.yaml"
    code, out = kafka("estate", "export", "--cluster", "sandbox", "--namespace", ns, "-o", str(path))
    assert (code, out) == (0, "")
    doc = yaml.safe_load(path.read_text())
    assert [t["name"] for t in doc["topics"]] == [f"{ns}t000", f"{ns}t001", f"{ns}t002"]
    code, out = kafka("estate", "export", "--cluster", "sandbox", "--namespace", ns)
    assert code == 0 and out == path.read_text()

    code, out = kafka("estate", "plan", "--cluster", "sandbox", "-f", str(path))
    assert (code, out) == (
        0,
        "RESOURCE  CHANGE  BEFORE  AFTER  KAFKA\nno drift: the cluster matches the file\n",
    )

    doc["topics"][2]["partitions"] = 4
    path.write_text(yaml.safe_dump(doc))
    code, out = kafka("estate", "plan", "--cluster", "sandbox", "-f", str(path), "--output", "json")
    assert code == 9
    body, error = out.rsplit("\n", 1)
    assert json.loads(body) == {
        "drift": True, "ok": True, "changes": 1, "refused": [],
        "items": [{"resource": f"topic:{ns}t002", "change": "alter", "before": "1 partitions",
                   "after": "4 partitions", "kafka": "valid"}],
    }  # fmt: skip
    assert error == "Drift: 1 difference(s), 1 change(s) to apply."

    code, out = kafka(
        "estate", "apply", "--cluster", "sandbox", "-f", str(path), "--reason", "grow", "--as", "operator"
    )
    req = ChangeRequest.objects.get()
    assert code == 0, out
    assert (req.kind, req.state, req.reason, req.requested_by_name) == (
        "estate.apply",
        RequestState.PENDING,
        "grow",
        "operator",
    )
    assert f"Change #{req.pk} is held for approval" in out

    code, out = kafka("estate", "apply", "--cluster", "sandbox", "-f", str(path), "--reason", "grow")
    assert code == 2 and "--as USER" in out


def test_it_exits_4_for_a_bad_file_or_what_kafka_cannot_do(personas, kafka_cluster, tmp_path):
    ns = make_namespace(personas, kafka_cluster, 1)
    path = tmp_path / "estate.yaml"
    path.write_text(f"kind: KafkaEstate\nversion: 1\nnamespace: {ns}\ntopics:\n- name: other\n")
    code, out = kafka("estate", "plan", "--cluster", "sandbox", "-f", str(path))
    assert code == 4
    assert out == (
        f"line 5: topic 'other' is outside the namespace '{ns}'; "
        "line 5: topic 'other' partitions must be a whole number of at least 1, not None; "
        "line 5: topic 'other' replication_factor must be a whole number of at least 1, not None"
    )
    path.write_text(
        f"kind: KafkaEstate\nversion: 1\nnamespace: {ns}\ntopics:\n"
        f"- {{name: {ns}t000, partitions: 1, replication_factor: 3, configs: {{retention.ms: 86400000}}}}\n"
    )
    code, out = kafka("estate", "plan", "--cluster", "sandbox", "-f", str(path), "--output", "json")
    assert code == 4
    body, error = out.rsplit("\n", 1)
    why = (
        f"{ns}t000: the replication factor changes from 1 to 3; change it with a reassignment, not the estate"
    )
    assert json.loads(body) == {
        "drift": True, "ok": False, "changes": 0, "refused": [why],
        "items": [
            {"resource": f"topic:{ns}t000", "change": "refused", "before": "RF 1", "after": why, "kafka": ""},
            {"resource": f"acl:User:app ALLOW READ on TOPIC:PREFIXED:{ns} from *", "change": "not in file, kept",
             "before": "present", "after": "present (deletions were not asked for)", "kafka": ""},
        ],
    }  # fmt: skip
    assert error == "Drift, and Kafka cannot apply it as it is: 1 refusal(s), see the rows."
    code, out = kafka("estate", "plan", "--cluster", "sandbox", "-f", str(tmp_path / "missing.yaml"))
    assert code == 2 and "Cannot read" in out
