"""The SCRAM users area on the sandbox through every door: admin only, Kafka's rules checked before
Kafka, the audit trail, change control holding a credential change (its password kept encrypted),
and the password nowhere: not in an audit row, the stored change, a log line, a page, an API answer,
the command line's output or a refusal's text."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

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
from console.models import AuditEvent, Cluster
from console.models.requests import ChangeRequest, RequestState
from console.requests import actions as requests
from console.scram import actions, audit_names, held, reads
from tests.conftest import hold
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db


@dataclass
class Scram:
    """One test's cluster, its SCRAM user and password, and the doors as a person uses them; the user's
    credentials are deleted after the test."""

    cluster: Cluster
    sandbox: Any
    personas: dict
    user: str
    secret: str  # a password no other text contains by chance

    @property
    def admin(self):
        return self.personas["admin"]

    @property
    def api_url(self) -> str:
        return f"/api/v1/clusters/{self.cluster.name}/scram-users/"

    @property
    def page_url(self) -> str:
        return f"/c/{self.cluster.name}/scram-users/"

    def client(self, person: str = "admin") -> Client:
        c = Client()
        c.force_login(self.personas[person] if isinstance(person, str) else person)
        return c

    def set(
        self,
        mechanism: str,
        iterations: int,
        password: str | None = None,
        *,
        person: str = "admin",
        cluster=None,
    ):
        """``actions.set_credential`` for the test's user (its password unless another is given)."""
        return actions.set_credential(
            actor=self.personas[person],
            cluster=cluster or self.cluster,
            user=self.user,
            mechanism=mechanism,
            iterations=iterations,
            password=self.secret if password is None else password,
        )

    def delete(self, mechanism: str, *, person: str = "admin"):
        return actions.delete_credential(
            actor=self.personas[person], cluster=self.cluster, user=self.user, mechanism=mechanism
        )

    def in_kafka(self):
        """The user's credentials as Kafka describes them (None: it has none)."""
        return gateway_for(self.cluster).describe_scram_user(self.user)

    def logs_in(self, mechanism: str, password: str | None = None) -> bool:
        """Whether a SCRAM client with ``password`` logs in against what the sandbox now keeps for the
        user (the sandbox's SASL listener checks the same store: tests/sandbox/test_scram.py)."""
        credential = self.sandbox.state.scram_credentials.get(mechanism, self.user)
        if credential is None:
            return False
        server = scramp.ScramMechanism(mechanism).make_server(lambda _: credential)
        client = scramp.ScramClient([mechanism], self.user, self.secret if password is None else password)
        try:
            server.set_client_first(client.get_client_first())
            client.set_server_first(server.get_server_first())
            server.set_client_final(client.get_client_final())
            client.set_server_final(server.get_server_final())
        except scramp.ScramException:
            return False
        return True


@pytest.fixture
def scram(personas, kafka_cluster, sandbox) -> Iterator[Scram]:
    world = Scram(
        kafka_cluster, sandbox, personas, f"scram-{uuid.uuid4().hex[:10]}", f"Pw-{uuid.uuid4().hex}"
    )
    yield world
    found = world.in_kafka()
    for mechanism in found.mechanisms if found is not None else ():
        gateway_for(kafka_cluster).delete_scram_credential(world.user, mechanism)


def everything_stored() -> str:
    """Every audit row and every change request row, all columns, as text."""
    rows = [json.dumps(list(AuditEvent.objects.values()), default=str)]
    rows.append(json.dumps(list(ChangeRequest.objects.values()), default=str))
    return "\n".join(rows)


def test_an_admin_creates_rotates_and_deletes_with_the_audit_trail(scram, debug_logs):
    user, secret, admin, cluster = scram.user, scram.secret, scram.admin, scram.cluster
    made = scram.set("SCRAM-SHA-512", 8192)
    assert (made.ok, made.op, made.message) == (
        True,
        "create",
        f"SCRAM-SHA-512 credential of {user} created (8192 iterations)",
    )
    assert scram.logs_in("SCRAM-SHA-512")
    assert not scram.logs_in("SCRAM-SHA-512", secret + "x")
    listed = {u.name: u for u in reads.list_users(actor=admin, cluster=cluster)}
    assert [(c.mechanism, c.iterations) for c in listed[user].credentials] == [("SCRAM-SHA-512", 8192)]

    rotated = scram.set("SCRAM-SHA-512", 4096, secret[::-1])
    assert (rotated.ok, rotated.op) == (True, "rotate")
    assert scram.logs_in("SCRAM-SHA-512", secret[::-1]) and not scram.logs_in("SCRAM-SHA-512")
    scram.set("SCRAM-SHA-256", 5000)
    one = reads.user_of(actor=admin, cluster=cluster, user=user)
    assert [(c.mechanism, c.iterations) for c in one.credentials] == [
        ("SCRAM-SHA-256", 5000),
        ("SCRAM-SHA-512", 4096),
    ]

    gone = scram.delete("SCRAM-SHA-512")
    assert (gone.ok, gone.op) == (True, "delete")
    assert not scram.logs_in("SCRAM-SHA-512", secret[::-1])
    again = scram.delete("SCRAM-SHA-512")
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


def test_only_an_admin_reads_or_changes_credentials(scram):
    for name in ("operator", "viewer", "auditor", "requester"):
        with pytest.raises(PermissionDenied):
            reads.list_users(actor=scram.personas[name], cluster=scram.cluster)
        with pytest.raises(PermissionDenied):
            scram.set("SCRAM-SHA-256", 4096, person=name)
        with pytest.raises(PermissionDenied):
            scram.delete("SCRAM-SHA-256", person=name)
    assert scram.in_kafka() is None
    refused = AuditEvent.objects.filter(action=audit_names.SCRAM_SET, outcome="refused")
    assert refused.count() == 4
    api = scram.client("operator")
    assert api.get(scram.api_url).status_code == 403
    body = {"user": scram.user, "mechanism": "SCRAM-SHA-256", "password": scram.secret}
    assert api.post(scram.api_url, body, content_type="application/json").status_code == 403
    assert scram.client("operator").get(scram.page_url).status_code in (403, 404)
    code, out = kafka("scram", "list", "--as", "operator")
    assert code != 0 and "cluster.admin" in out
    assert scram.secret not in everything_stored()


def test_bad_input_is_refused_before_kafka_without_the_password(scram, debug_logs):
    user, short = scram.user, "tiny-pw"
    with pytest.raises(ChangeInvalid) as refused:
        scram.set("SCRAM-SHA-256", 100, short)
    assert "at least 8 characters" in str(refused.value) and "from 4096 to 16384" in str(refused.value)
    assert short not in str(refused.value)
    row = AuditEvent.objects.get(action=audit_names.SCRAM_SET, outcome="refused")
    assert row.targets == [f"scram-user:{user}"]
    assert scram.in_kafka() is None
    api = scram.client().post(
        scram.api_url,
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 4096, "password": short},
        content_type="application/json",
    )
    assert api.status_code == 422 and "at least 8 characters" in api.content.decode()
    bad_iterations = scram.client().post(
        scram.api_url,
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 99, "password": short + "-longer"},
        content_type="application/json",
    )
    assert bad_iterations.status_code == 400
    for text in (api.content.decode(), bad_iterations.content.decode(), everything_stored(), debug_logs.text):
        assert short not in text


def test_the_api_lists_sets_and_deletes_and_never_answers_the_password(scram):
    api, user, base = scram.client(), scram.user, scram.api_url
    made = api.post(
        base,
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 6000, "password": scram.secret},
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
    assert scram.logs_in("SCRAM-SHA-256")
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
    assert not scram.logs_in("SCRAM-SHA-256")
    for answer in (made, missing, deleted):
        assert scram.secret not in answer.content.decode()
    assert scram.secret not in everything_stored()


def test_the_page_lists_sets_and_deletes_with_a_typed_confirmation(scram):
    page, user, secret, url = scram.client(), scram.user, scram.secret, scram.page_url
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
    assert scram.logs_in("SCRAM-SHA-512")
    listing = page.get(url).content.decode()
    assert (
        f'data-user="{user}" data-mechanism="SCRAM-SHA-512"' in listing
        and 'href="/c/sandbox/scram-users/"' in listing
    )
    assert secret not in listing
    delete_url = url + "delete/"
    wrong = page.post(
        delete_url, {"user": user, "mechanism": "SCRAM-SHA-512", "confirmation": "nope", "action": "delete"}
    )
    assert wrong.status_code == 200 and "Type the user name exactly" in wrong.content.decode()
    assert scram.logs_in("SCRAM-SHA-512")
    gone = page.post(
        delete_url, {"user": user, "mechanism": "SCRAM-SHA-512", "confirmation": user, "action": "delete"}
    )
    assert gone.status_code == 302
    assert scram.in_kafka() is None


def test_the_command_line_reads_the_password_from_a_file_never_from_argv(scram, tmp_path):
    user, secret = scram.user, scram.secret
    path = tmp_path / "pw"
    path.write_text(secret + "\n")
    code, out = kafka(
        "scram", "set", user, "--mechanism", "SCRAM-SHA-256", "--iterations", "4096",
        "--password-file", str(path), "--as", "admin", "--output", "json",
    )  # fmt: skip
    assert code == 0, out
    assert json.loads(out)["items"][0]["op"] == "create"
    assert scram.logs_in("SCRAM-SHA-256")  # the newline is not part of it
    code, out = kafka("scram", "list", "--as", "admin", "--output", "json")
    assert {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 4096} in json.loads(out)["items"]
    code, refused = kafka("scram", "set", user, "--as", "admin")  # no terminal, no file
    assert code != 0 and "--password-file" in refused
    with pytest.raises(CommandError):  # there is no --password option at all
        call_command(
            "kafka", "scram", "set", user, "--password", secret, "--as", "admin",
            stdout=io.StringIO(), stderr=io.StringIO(),
        )  # fmt: skip
    code, out = kafka("scram", "delete", user, "--mechanism", "SCRAM-SHA-256", "--as", "admin")
    assert code == 0, out
    assert scram.in_kafka() is None
    assert secret not in out and secret not in everything_stored()


def test_a_held_change_keeps_the_password_encrypted_and_runs_once_approved(scram, debug_logs):
    admin, cluster, user, secret = scram.admin, scram.cluster, scram.user, scram.secret
    second = get_user_model().objects.create_superuser(username="admin2", password="pw-admin2")
    hold(cluster, admin, [held.GATE])
    code, out = kafka("scram", "delete", user, "--mechanism", "SCRAM-SHA-256", "--as", "admin")
    assert code == 3, out  # held: refused without a choice
    answer = scram.client().post(
        scram.api_url,
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
    assert scram.in_kafka() is None  # nothing ran yet
    detail = scram.client(second).get(f"/c/{cluster.name}/requests/{req.pk}/")
    assert detail.status_code == 200
    assert "password: set" in detail.content.decode() and secret not in detail.content.decode()
    ciphertext = req.payload["value_encrypted"]
    shown = scram.client(second).get(f"/api/v1/clusters/{cluster.name}/requests/{req.pk}/")
    listed = scram.client(second).get(f"/api/v1/clusters/{cluster.name}/requests/", {"per_page": 1000})
    code, cli_json = kafka("requests", "show", str(req.pk), "--as", "admin2", "--output", "json")
    code_t, cli_table = kafka("requests", "show", str(req.pk), "--as", "admin2")
    assert (shown.status_code, listed.status_code, code, code_t) == (200, 200, 0, 0), cli_json
    assert shown.json()["payload"] == {
        "op": "set",
        "user": user,
        "mechanism": "SCRAM-SHA-512",
        "iterations": 10000,
        "password": "set",
    }
    for text in (
        shown.content.decode(),
        listed.content.decode(),
        cli_json,
        cli_table,
        detail.content.decode(),
    ):
        assert ciphertext not in text and secret not in text and "value_encrypted" not in text
    requests.decide(actor=second, request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert (req.state, req.result["ok"]) == (RequestState.SUCCEEDED, True), req.result
    assert scram.logs_in("SCRAM-SHA-512")
    assert secret not in everything_stored() and secret not in debug_logs.text
    trail = json.dumps(list(AuditEvent.objects.values()), default=str)
    assert ciphertext not in trail and "value_encrypted" not in trail
    # a held delete of a credential that is not there cannot be submitted
    with pytest.raises(ChangeInvalid, match="has no SCRAM-SHA-256 credential to delete"):
        held.prepare_delete(admin, cluster, user, "SCRAM-SHA-256")


def test_a_controller_registered_cluster_sets_and_deletes_but_cannot_list(scram):
    from tests.unit.quorum_helpers import register_controllers

    controllers = register_controllers(scram.sandbox, scram.personas)
    user, admin = scram.user, scram.admin
    made = scram.set("SCRAM-SHA-256", 4096, cluster=controllers)
    assert (made.ok, made.op) == (True, "set")  # whether it was a creation cannot be read there
    assert scram.logs_in("SCRAM-SHA-256")
    event = AuditEvent.objects.filter(action=audit_names.SCRAM_SET, outcome="success").latest("pk")
    assert (event.before, event.after) == (
        {f"scram-user:{user}": None},
        {f"scram-user:{user}": None},
    )  # unknown
    page = scram.client().get(f"/c/{controllers.name}/scram-users/").content.decode()
    assert 'id="scram-list-error"' in page and "direct-to-controller mode" in page
    assert scram.client().get(f"/api/v1/clusters/{controllers.name}/scram-users/").status_code in (
        400,
        409,
        422,
        502,
    )
    hold(controllers, admin, [held.GATE])
    prepared = held.prepare_delete(admin, controllers, user, "SCRAM-SHA-256")
    assert prepared.review["ok"] and "cannot be read through the controllers" in prepared.review["kafka"]
    gone = scram.delete("SCRAM-SHA-256")
    assert gone.ok and not scram.logs_in("SCRAM-SHA-256")


def test_an_owed_outcome_is_reconciled_from_the_users_credentials(scram):
    from console.audit import outcomes

    def owe(action: str, params: dict) -> None:
        outcomes.requested(
            actor=scram.admin,
            action=action,
            cluster=scram.cluster,
            targets=[f"scram-user:{scram.user}"],
            params={"user": scram.user, **params},
        )  # the database refused the outcome after Kafka acted: the reconciler re-reads

    gw = gateway_for(scram.cluster)
    gw.upsert_scram_credential(scram.user, "SCRAM-SHA-512", scram.secret, 8192)
    owe(audit_names.SCRAM_SET, {"mechanism": "SCRAM-SHA-512", "iterations": 8192, "op": "create"})
    assert outcomes.reconcile(grace_s=0) == 1
    event = AuditEvent.objects.get(action=audit_names.SCRAM_SET, outcome="reconciled")
    assert event.after == {f"scram-user:{scram.user}": {"SCRAM-SHA-512": 8192}}  # the set is there
    assert event.on_behalf_of == "admin"

    gw.delete_scram_credential(scram.user, "SCRAM-SHA-512")
    owe(audit_names.SCRAM_DELETE, {"mechanism": "SCRAM-SHA-512", "op": "delete"})
    assert outcomes.reconcile(grace_s=0) == 1
    event = AuditEvent.objects.get(action=audit_names.SCRAM_DELETE, outcome="reconciled")
    assert event.after == {f"scram-user:{scram.user}": {}}  # the credential is gone
    assert not outcomes.OwedOutcome.objects.exists() and scram.secret not in everything_stored()


def test_the_api_refuses_a_number_for_a_user_name_or_a_password(scram):
    api = scram.client()
    for body in (
        {"user": 2147483648, "mechanism": "SCRAM-SHA-256", "password": scram.secret},
        {"user": 1e308, "mechanism": "SCRAM-SHA-256", "password": scram.secret},
        {"user": scram.user, "mechanism": "SCRAM-SHA-256", "password": 123456789012},
    ):
        answer = api.post(scram.api_url, body, content_type="application/json")
        assert answer.status_code == 400, (body, answer.content)
        assert "Not a valid string." in answer.content.decode()
    deleted = api.post(
        scram.api_url + "delete/", {"user": 12, "mechanism": "SCRAM-SHA-256"}, content_type="application/json"
    )
    assert deleted.status_code == 400
    known = {u.name for u in gateway_for(scram.cluster).describe_scram_users()}
    assert not {"2147483648", "1e+308", scram.user, "12"} & known


def test_the_list_is_paged_by_name_on_the_api_and_the_page(scram, monkeypatch):
    other = f"{scram.user}-b"
    try:
        scram.set("SCRAM-SHA-256", 4096)
        gateway_for(scram.cluster).upsert_scram_credential(other, "SCRAM-SHA-512", scram.secret, 4096)
        everyone = [u.name for u in gateway_for(scram.cluster).describe_scram_users()]
        assert everyone == sorted(everyone) and {scram.user, other} <= set(everyone)
        api = scram.client()
        walked = []
        for page in range(1, len(everyone) + 1):
            answer = api.get(scram.api_url, {"per_page": 1, "page": page}).json()
            assert (answer["count"], answer["page"], answer["pages"], answer["per_page"]) == (
                len(everyone),
                page,
                len(everyone),
                1,
            )
            walked += [u["user"] for u in answer["results"]]
        assert walked == everyone
        past = api.get(scram.api_url, {"per_page": 1, "page": len(everyone) + 5}).json()
        assert past["page"] == len(everyone) and [u["user"] for u in past["results"]] == everyone[-1:]

        monkeypatch.setattr(reads, "PAGE_SIZE", 1)  # the page's size
        at = everyone.index(other) + 1
        html = scram.client().get(scram.page_url, {"page": at}).content.decode()
        assert f'data-user="{other}"' in html and f'data-user="{scram.user}"' not in html
        assert f"Page {at} of {len(everyone)}" in html and 'id="scram-count"' in html
        assert scram.client().get(scram.page_url, {"page": "x" * 50}).status_code == 200
    finally:
        gateway_for(scram.cluster).delete_scram_credential(other, "SCRAM-SHA-512")
