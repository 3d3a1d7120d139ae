"""The SCRAM users area on the sandbox through every door: admin only, Kafka's rules checked before
Kafka, the audit trail, change control holding a credential change (its password kept encrypted),
and the password nowhere: not in an audit row, the stored change, a log line, a page, an API answer,
the command line's output or a refusal's text."""

from __future__ import annotations

import io
import json
import uuid

import pytest
import scramp
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from console import crypto, operations
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.requests import actions as requests
from console.scram import actions, audit_names, held, reads
from sandbox.sasl import scram_credentials_of
from tests.conftest import hold
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(kafka_cluster):
    """A unique SCRAM user name; its credentials are deleted after the test."""
    name = f"scram-{uuid.uuid4().hex[:10]}"
    yield name
    gw = gateway_for(kafka_cluster)
    found = gw.describe_scram_user(name)
    for mechanism in found.mechanisms if found is not None else ():
        gw.delete_scram_credential(name, mechanism)


@pytest.fixture
def secret() -> str:
    """A password no other text contains by chance."""
    return f"Pw-{uuid.uuid4().hex}"


def client_for(person) -> Client:
    c = Client()
    c.force_login(person)
    return c


def logs_in(sandbox, user: str, mechanism: str, password: str) -> bool:
    """Whether a SCRAM client with ``password`` logs in against what the sandbox now keeps for the user
    (the sandbox's SASL listener checks the same store: tests/sandbox/test_scram.py)."""
    credential = scram_credentials_of(sandbox, sandbox.state).get(mechanism, user)
    if credential is None:
        return False
    server = scramp.ScramMechanism(mechanism).make_server(lambda _: credential)
    client = scramp.ScramClient([mechanism], user, password)
    try:
        server.set_client_first(client.get_client_first())
        client.set_server_first(server.get_server_first())
        server.set_client_final(client.get_client_final())
        client.set_server_final(server.get_server_final())
    except scramp.ScramException:
        return False
    return True


def everything_stored() -> str:
    """Every audit row and every change request row, all columns, as text."""
    rows = [json.dumps(list(AuditEvent.objects.values()), default=str)]
    rows.append(json.dumps(list(ChangeRequest.objects.values()), default=str))
    return "\n".join(rows)


def test_an_admin_creates_rotates_and_deletes_with_the_audit_trail(
    personas, kafka_cluster, sandbox, user, secret, debug_logs
):
    admin = personas["admin"]
    made = actions.set_credential(
        actor=admin,
        cluster=kafka_cluster,
        user=user,
        mechanism="SCRAM-SHA-512",
        iterations=8192,
        password=secret,
    )
    assert (made.ok, made.op, made.message) == (
        True,
        "create",
        f"SCRAM-SHA-512 credential of {user} created (8192 iterations)",
    )
    assert logs_in(sandbox, user, "SCRAM-SHA-512", secret)
    assert not logs_in(sandbox, user, "SCRAM-SHA-512", secret + "x")
    listed = {u.name: u for u in reads.list_users(actor=admin, cluster=kafka_cluster)}
    assert [(c.mechanism, c.iterations) for c in listed[user].credentials] == [("SCRAM-SHA-512", 8192)]

    rotated = actions.set_credential(
        actor=admin,
        cluster=kafka_cluster,
        user=user,
        mechanism="SCRAM-SHA-512",
        iterations=4096,
        password=secret[::-1],
    )
    assert (rotated.ok, rotated.op) == (True, "rotate")
    assert logs_in(sandbox, user, "SCRAM-SHA-512", secret[::-1]) and not logs_in(
        sandbox, user, "SCRAM-SHA-512", secret
    )
    actions.set_credential(
        actor=admin,
        cluster=kafka_cluster,
        user=user,
        mechanism="SCRAM-SHA-256",
        iterations=5000,
        password=secret,
    )
    one = reads.user_of(actor=admin, cluster=kafka_cluster, user=user)
    assert [(c.mechanism, c.iterations) for c in one.credentials] == [
        ("SCRAM-SHA-256", 5000),
        ("SCRAM-SHA-512", 4096),
    ]

    gone = actions.delete_credential(actor=admin, cluster=kafka_cluster, user=user, mechanism="SCRAM-SHA-512")
    assert (gone.ok, gone.op) == (True, "delete")
    assert not logs_in(sandbox, user, "SCRAM-SHA-512", secret[::-1])
    again = actions.delete_credential(
        actor=admin, cluster=kafka_cluster, user=user, mechanism="SCRAM-SHA-512"
    )
    assert (again.ok, again.error.name) == (False, "RESOURCE_NOT_FOUND")
    assert "Attempt to delete a user credential that does not exist" in again.message

    events = AuditEvent.objects.filter(action__in=[audit_names.SCRAM_SET, audit_names.SCRAM_DELETE]).order_by(
        "pk"
    )
    assert [(e.action, e.outcome, e.params.get("op")) for e in events] == [
        ("scram.set", "requested", "create"),
        ("scram.set", "success", "create"),
        ("scram.set", "requested", "rotate"),
        ("scram.set", "success", "rotate"),
        ("scram.set", "requested", "create"),
        ("scram.set", "success", "create"),
        ("scram.delete", "requested", "delete"),
        ("scram.delete", "success", "delete"),
        ("scram.delete", "requested", "delete"),
        ("scram.delete", "failed", "delete"),
    ]
    first = events[1]
    assert first.targets == [f"scram-user:{user}"]
    assert (
        first.params["password"] == "******" and first.params["iterations"] == 8192
    )  # the store masks the key too
    assert first.after == {f"scram-user:{user}": {"SCRAM-SHA-512": 8192}}
    assert events[3].before == {f"scram-user:{user}": {"SCRAM-SHA-512": 8192}}
    stored, logged = everything_stored(), debug_logs.text
    # kafka-python logs each request at DEBUG: the upsertion's salt and SaltedPassword are hidden there
    assert "salted_password=<hidden>" in logged and "salted_password=b" not in logged
    for password in (secret, secret[::-1]):
        assert password not in stored and password not in logged


def test_only_an_admin_reads_or_changes_credentials(personas, kafka_cluster, user, secret):
    for name in ("operator", "viewer", "auditor", "requester"):
        person = personas[name]
        with pytest.raises(PermissionDenied):
            reads.list_users(actor=person, cluster=kafka_cluster)
        with pytest.raises(PermissionDenied):
            actions.set_credential(
                actor=person,
                cluster=kafka_cluster,
                user=user,
                mechanism="SCRAM-SHA-256",
                iterations=4096,
                password=secret,
            )
        with pytest.raises(PermissionDenied):
            actions.delete_credential(
                actor=person, cluster=kafka_cluster, user=user, mechanism="SCRAM-SHA-256"
            )
    assert gateway_for(kafka_cluster).describe_scram_user(user) is None
    refused = AuditEvent.objects.filter(action=audit_names.SCRAM_SET, outcome="refused")
    assert refused.count() == 4
    api = client_for(personas["operator"])
    base = f"/api/v1/clusters/{kafka_cluster.name}/scram-users/"
    assert api.get(base).status_code == 403
    body = {"user": user, "mechanism": "SCRAM-SHA-256", "password": secret}
    assert api.post(base, body, content_type="application/json").status_code == 403
    assert client_for(personas["operator"]).get(f"/c/{kafka_cluster.name}/scram-users/").status_code in (
        403,
        404,
    )
    code, out = kafka("scram", "list", "--as", "operator")
    assert code != 0 and "cluster.admin" in out
    assert secret not in everything_stored()


def test_bad_input_is_refused_before_kafka_without_the_password(personas, kafka_cluster, user, debug_logs):
    admin, short = personas["admin"], "tiny-pw"
    with pytest.raises(ChangeInvalid) as refused:
        actions.set_credential(
            actor=admin,
            cluster=kafka_cluster,
            user=user,
            mechanism="SCRAM-SHA-256",
            iterations=100,
            password=short,
        )
    assert "at least 8 characters" in str(refused.value) and "from 4096 to 16384" in str(refused.value)
    assert short not in str(refused.value)
    row = AuditEvent.objects.get(action=audit_names.SCRAM_SET, outcome="refused")
    assert row.targets == [f"scram-user:{user}"]
    assert gateway_for(kafka_cluster).describe_scram_user(user) is None
    api = client_for(admin).post(
        f"/api/v1/clusters/{kafka_cluster.name}/scram-users/",
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 4096, "password": short},
        content_type="application/json",
    )
    assert api.status_code == 422 and "at least 8 characters" in api.content.decode()
    bad_iterations = client_for(admin).post(
        f"/api/v1/clusters/{kafka_cluster.name}/scram-users/",
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 99, "password": short + "-longer"},
        content_type="application/json",
    )
    assert bad_iterations.status_code == 400
    for text in (api.content.decode(), bad_iterations.content.decode(), everything_stored(), debug_logs.text):
        assert short not in text


def test_the_api_lists_sets_and_deletes_and_never_answers_the_password(
    personas, kafka_cluster, sandbox, user, secret
):
    api = client_for(personas["admin"])
    base = f"/api/v1/clusters/{kafka_cluster.name}/scram-users/"
    made = api.post(
        base,
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 6000, "password": secret},
        content_type="application/json",
    )
    assert made.status_code == 200, made.content
    assert made.json() == {
        "user": user,
        "mechanism": "SCRAM-SHA-256",
        "op": "create",
        "iterations": 6000,
        "ok": True,
        "message": f"SCRAM-SHA-256 credential of {user} created (6000 iterations)",
        "error": None,
    }
    assert logs_in(sandbox, user, "SCRAM-SHA-256", secret)
    listed = api.get(base, {"per_page": 1000}).json()["results"]
    assert {"user": user, "credentials": [{"mechanism": "SCRAM-SHA-256", "iterations": 6000}]} in listed
    missing = api.post(
        base + "delete/", {"user": user, "mechanism": "SCRAM-SHA-512"}, content_type="application/json"
    )
    assert missing.status_code == 207 and missing.json()["error"]["name"] == "RESOURCE_NOT_FOUND"
    deleted = api.post(
        base + "delete/", {"user": user, "mechanism": "SCRAM-SHA-256"}, content_type="application/json"
    )
    assert deleted.status_code == 200 and deleted.json()["op"] == "delete"
    assert not logs_in(sandbox, user, "SCRAM-SHA-256", secret)
    for answer in (made, missing, deleted):
        assert secret not in answer.content.decode()
    assert secret not in everything_stored()


def test_the_page_lists_sets_and_deletes_with_a_typed_confirmation(
    personas, kafka_cluster, sandbox, user, secret
):
    page = client_for(personas["admin"])
    url = f"/c/{kafka_cluster.name}/scram-users/"
    form = {
        "user": user,
        "mechanism": "SCRAM-SHA-512",
        "iterations": "4096",
        "password": secret,
        "password_again": secret + "!",
        "action": "apply",
    }
    differ = page.post(url, form)
    assert differ.status_code == 200 and "The two passwords differ." in differ.content.decode()
    assert secret not in differ.content.decode()  # never rendered back
    form["password_again"] = secret
    done = page.post(url, form)
    assert done.status_code == 302, done.content.decode()[:2000]
    assert logs_in(sandbox, user, "SCRAM-SHA-512", secret)
    listing = page.get(url).content.decode()
    assert (
        f'data-user="{user}" data-mechanism="SCRAM-SHA-512"' in listing
        and 'href="/c/sandbox/scram-users/"' in listing
    )
    assert secret not in listing
    delete_url = f"/c/{kafka_cluster.name}/scram-users/delete/"
    wrong = page.post(
        delete_url, {"user": user, "mechanism": "SCRAM-SHA-512", "confirmation": "nope", "action": "delete"}
    )
    assert wrong.status_code == 200 and "Type the user name exactly" in wrong.content.decode()
    assert logs_in(sandbox, user, "SCRAM-SHA-512", secret)
    gone = page.post(
        delete_url, {"user": user, "mechanism": "SCRAM-SHA-512", "confirmation": user, "action": "delete"}
    )
    assert gone.status_code == 302
    assert gateway_for(kafka_cluster).describe_scram_user(user) is None


def test_the_command_line_reads_the_password_from_a_file_never_from_argv(
    personas, kafka_cluster, sandbox, user, secret, tmp_path
):
    path = tmp_path / "pw"
    path.write_text(secret + "\n")
    code, out = kafka(
        "scram", "set", user, "--mechanism", "SCRAM-SHA-256", "--iterations", "4096",
        "--password-file", str(path), "--as", "admin", "--output", "json",
    )  # fmt: skip
    assert code == 0, out
    assert json.loads(out)["items"][0]["op"] == "create"
    assert logs_in(sandbox, user, "SCRAM-SHA-256", secret)  # the newline is not part of it
    code, out = kafka("scram", "list", "--as", "admin", "--output", "json")
    assert {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 4096} in json.loads(out)["items"]
    code, refused = kafka("scram", "set", user, "--as", "admin")  # no terminal, no file
    assert code != 0 and "--password-file" in refused
    with pytest.raises(CommandError):  # there is no --password option at all
        call_command(
            "kafka",
            "scram",
            "set",
            user,
            "--password",
            secret,
            "--as",
            "admin",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    code, out = kafka("scram", "delete", user, "--mechanism", "SCRAM-SHA-256", "--as", "admin")
    assert code == 0, out
    assert gateway_for(kafka_cluster).describe_scram_user(user) is None
    assert secret not in out and secret not in everything_stored()


def test_a_held_change_keeps_the_password_encrypted_and_runs_once_approved(
    personas, kafka_cluster, sandbox, user, secret, debug_logs
):
    admin = personas["admin"]
    second = get_user_model().objects.create_superuser(username="admin2", password="pw-admin2")
    hold(kafka_cluster, admin, [held.GATE])
    code, out = kafka("scram", "delete", user, "--mechanism", "SCRAM-SHA-256", "--as", "admin")
    assert code == 3, out  # held: refused without a choice
    answer = client_for(admin).post(
        f"/api/v1/clusters/{kafka_cluster.name}/scram-users/",
        {
            "user": user,
            "mechanism": "SCRAM-SHA-512",
            "iterations": 10000,
            "password": secret,
            "reason": "new app",
        },
        content_type="application/json",
    )
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.state) == ("change.scram", RequestState.PENDING)
    assert secret not in json.dumps(req.payload) and crypto.decrypt(req.payload["value_encrypted"]) == secret
    assert {k: v for k, v in req.payload.items() if k != "value_encrypted"} == {
        "op": "set",
        "user": user,
        "mechanism": "SCRAM-SHA-512",
        "iterations": 10000,
    }
    assert req.review["columns"] == ["change", "user", "mechanism", "iterations", "password"]
    assert req.review["rows"] == [["create", user, "SCRAM-SHA-512", "10000", "password: set"]]
    assert secret not in answer.content.decode()
    assert gateway_for(kafka_cluster).describe_scram_user(user) is None  # nothing ran yet
    detail = client_for(second).get(f"/c/{kafka_cluster.name}/requests/{req.pk}/")
    assert detail.status_code == 200
    assert "password: set" in detail.content.decode() and secret not in detail.content.decode()
    requests.decide(actor=second, request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert (req.state, req.result["ok"]) == (RequestState.SUCCEEDED, True), req.result
    assert logs_in(sandbox, user, "SCRAM-SHA-512", secret)
    assert secret not in everything_stored() and secret not in debug_logs.text
    # a held delete of a credential that is not there cannot be submitted
    with pytest.raises(ChangeInvalid, match="has no SCRAM-SHA-256 credential to delete"):
        held.prepare_delete(admin, kafka_cluster, user, "SCRAM-SHA-256")


def test_a_controller_registered_cluster_sets_and_deletes_but_cannot_list(
    personas, kafka_cluster, sandbox, user, secret
):
    from tests.unit.quorum_helpers import register_controllers

    controllers = register_controllers(sandbox, personas)
    admin = personas["admin"]
    made = actions.set_credential(
        actor=admin,
        cluster=controllers,
        user=user,
        mechanism="SCRAM-SHA-256",
        iterations=4096,
        password=secret,
    )
    assert (made.ok, made.op) == (True, "set")  # whether it was a creation cannot be read there
    assert logs_in(sandbox, user, "SCRAM-SHA-256", secret)
    event = AuditEvent.objects.filter(action=audit_names.SCRAM_SET, outcome="success").latest("pk")
    assert (event.before, event.after) == (
        {f"scram-user:{user}": None},
        {f"scram-user:{user}": None},
    )  # unknown
    page = client_for(admin).get(f"/c/{controllers.name}/scram-users/").content.decode()
    assert 'id="scram-list-error"' in page and "direct-to-controller mode" in page
    assert client_for(admin).get(f"/api/v1/clusters/{controllers.name}/scram-users/").status_code in (
        400,
        409,
        422,
        502,
    )
    hold(controllers, admin, [held.GATE])
    prepared = held.prepare_delete(admin, controllers, user, "SCRAM-SHA-256")
    assert prepared.review["ok"] and "cannot be read through the controllers" in prepared.review["kafka"]
    gone = actions.delete_credential(actor=admin, cluster=kafka_cluster, user=user, mechanism="SCRAM-SHA-256")
    assert gone.ok and not logs_in(sandbox, user, "SCRAM-SHA-256", secret)
