"""ACL export and import as files (issue 39 item 9): YAML the batch form and ``kafka acls import`` take
back unchanged, and a kafka-acls.sh script; on the area, the page, the API and the CLI."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from console.acls import actions as acls
from console.acls import core as acl_core
from console.identity import tokens
from console.kafka.types import AclBinding, AclBindingFilter
from console.models import AuditEvent
from tests.unit.kafka_cli import kafka

ODD = [
    AclBinding("TOPIC", "pay", "PREFIXED", "User:o'neil", "*", "DESCRIBE_CONFIGS", "ALLOW"),
    AclBinding("CLUSTER", "kafka-cluster", "LITERAL", "User:x", "10.0.0.1", "IDEMPOTENT_WRITE", "DENY"),
    AclBinding("TOPIC", "*", "LITERAL", "User:*", "*", "READ", "ALLOW"),
    AclBinding("GROUP", "g $(id)", "LITERAL", "User:y", "*", "ALL", "ALLOW"),
    AclBinding("TRANSACTIONAL_ID", "tx", "LITERAL", "User:y", "*", "WRITE", "ALLOW"),
]


def test_the_yaml_export_is_what_the_batch_takes_back():
    text = acl_core.export_yaml(ODD, source="cluster t")
    creates, deletes = acl_core.parse_batch(text)
    assert set(creates) == set(ODD) and deletes == []
    assert text.startswith("# 5 ACL binding(s) of cluster t")


def test_the_script_adds_each_binding_as_kafka_acls_takes_it(tmp_path):
    script = tmp_path / "acls.sh"
    script.write_text(acl_core.export_script(ODD, source="cluster t"))
    recorder = tmp_path / "kafka-acls.sh"
    recorder.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\037" "$a"; done; echo\n')
    recorder.chmod(recorder.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "BOOTSTRAP_SERVER": "b:9092", "KAFKA_ACLS": str(recorder)}
    out = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, check=True).stdout
    calls = [line.rstrip("\x1f").split("\x1f") for line in out.splitlines()]
    assert len(calls) == len(ODD)
    assert all(c[:3] == ["--bootstrap-server", "b:9092", "--add"] for c in calls)
    by_op = {c[c.index("--operation") + 1]: c for c in calls}
    assert set(by_op) == {"DescribeConfigs", "IdempotentWrite", "Read", "All", "Write"}
    assert by_op["DescribeConfigs"][3:5] == ["--allow-principal", "User:o'neil"]
    assert by_op["DescribeConfigs"][-4:] == ["--topic", "pay", "--resource-pattern-type", "prefixed"]
    assert by_op["IdempotentWrite"][3:7] == ["--deny-principal", "User:x", "--deny-host", "10.0.0.1"]
    assert "--cluster" in by_op["IdempotentWrite"]
    assert by_op["All"][by_op["All"].index("--group") + 1] == "g $(id)"  # quoted, never run
    assert by_op["Read"][by_op["Read"].index("--topic") + 1] == "*"
    assert "--transactional-id" in by_op["Write"]
    missing = subprocess.run(
        ["sh", str(script)], env={"PATH": os.environ["PATH"]}, capture_output=True, text=True
    )
    assert missing.returncode != 0 and "BOOTSTRAP_SERVER" in missing.stderr


@pytest.fixture
def mine(personas, kafka_cluster):
    tag = uuid.uuid4().hex[:8]
    who = f"User:exp-{tag}"
    made = [
        AclBinding("TOPIC", f"exp-{tag}", "LITERAL", who, "*", "READ", "ALLOW"),
        AclBinding("GROUP", f"exp-{tag}-", "PREFIXED", who, "*", "READ", "ALLOW"),
    ]
    assert acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, creates=made).ok
    yield who, made
    acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, deletes=made)


@pytest.mark.django_db
def test_page_export_then_import_by_file(client, personas, kafka_cluster, mine):
    who, made = mine
    client.force_login(personas["operator"])
    url = reverse("acl_export", kwargs={"name": kafka_cluster.name})
    answer = client.get(url, {"principal": who, "output": "yaml"})
    assert answer.status_code == 200 and answer["Content-Disposition"].endswith('-acls.yaml"')
    assert set(acl_core.parse_batch(answer.content.decode())[0]) == set(made)
    script = client.get(url, {"principal": who, "output": "script"})
    assert script["Content-Type"].startswith("text/x-shellscript") and script.content.count(b"--add") == 2
    bad = client.get(url, {"principal": "nobody", "output": "yaml"})
    assert bad.status_code == 400 and b"User:name" in bad.content
    assert client.get(url, {"output": "xml"}).status_code == 400

    # Import on another principal: the exported file with the principal renamed, uploaded.
    other = who + "-copy"
    text = answer.content.decode().replace(who, other)
    new = reverse("acl_new", kwargs={"name": kafka_cluster.name})
    review = client.post(new, {"mode": "batch", "file": SimpleUploadedFile("a.yaml", text.encode())})
    body = review.content.decode()
    assert review.status_code == 200 and "Create 2 binding" in body and other in body
    both = client.post(
        new, {"mode": "batch", "text": text, "file": SimpleUploadedFile("a.yaml", text.encode())}
    )
    assert "paste the bindings or choose a file, not both" in both.content.decode()
    latin = client.post(
        new, {"mode": "batch", "file": SimpleUploadedFile("a.yaml", "principal: é".encode("latin-1"))}
    )
    assert "not UTF-8" in latin.content.decode()
    empty = client.post(new, {"mode": "batch", "text": ""})
    assert "paste the bindings or choose a file" in empty.content.decode()
    # Nothing reached Kafka from the refused or reviewed forms.
    assert (
        acls.preview_delete(
            actor=personas["operator"], cluster=kafka_cluster, filters=[AclBindingFilter(principal=other)]
        )
        == []
    )


@pytest.mark.django_db
def test_api_export(client, personas, kafka_cluster, mine):
    who, made = mine
    token = tokens.create_token(actor=personas["operator"], name="t", scope="read", days=1).secret
    url = reverse("api:acls-export", kwargs={"name": kafka_cluster.name})
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    answer = client.get(url, {"principal": who, "output": "script"}, **auth)
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/x-shellscript")
    assert answer.content.decode().count(f"--allow-principal {who}") == 2
    yaml_answer = client.get(url, {"principal": who}, **auth)
    assert set(acl_core.parse_batch(yaml_answer.content.decode())[0]) == set(made)
    assert client.get(url, {"output": "xml"}, **auth).status_code == 400


@pytest.mark.django_db
def test_cli_export_import_round_trip(personas, kafka_cluster, mine, tmp_path):
    who, made = mine
    path = tmp_path / "acls.yaml"
    code, _ = kafka("acls", "export", "--principal", who, "-o", str(path))
    assert code == 0 and set(acl_core.parse_batch(path.read_text())[0]) == set(made)
    code, out = kafka("acls", "export", "--principal", who, "--format", "script")
    assert code == 0 and out.count("--add") == 2
    other = who + "-cli"
    path.write_text(path.read_text().replace(who, other))
    code, out = kafka("acls", "import", "-f", str(path), "--dry-run", "--output", "json", "--as", "operator")
    assert code == 0 and [r["action"] for r in json.loads(out)["items"]] == ["would create"] * 2
    gone = [AclBindingFilter(principal=other)]
    assert acls.preview_delete(actor=personas["operator"], cluster=kafka_cluster, filters=gone) == []
    code, out = kafka("acls", "import", "-f", str(path), "--output", "json", "--as", "operator")
    assert code == 0 and json.loads(out)["ok"] is True
    copied = acls.preview_delete(actor=personas["operator"], cluster=kafka_cluster, filters=gone)
    assert len(copied) == 2
    assert AuditEvent.objects.filter(action="acl.create", targets__icontains=other).count() >= 1
    acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, deletes=copied)
    path.write_text("create: [{principal: nobody}]")
    code, out = kafka("acls", "import", "-f", str(path), "--as", "operator")
    assert code != 0 and "User:name" in out
    code, out = kafka("acls", "import", "-f", str(tmp_path / "missing.yaml"), "--as", "operator")
    assert code == 2 and "Cannot read" in out
