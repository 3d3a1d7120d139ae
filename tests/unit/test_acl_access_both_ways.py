"""Effective access both ways: "who can do what on topic T" and "everything User:x can do"
(issue 39 item 9), decided as Kafka's StandardAuthorizer does, on the area, the page, the API and the CLI."""

from __future__ import annotations

import json
import uuid

import pytest
from django.urls import reverse

from console.acls import actions as acls
from console.acls import authorizer
from console.acls.core import AclValidationError
from console.identity import tokens
from console.kafka.types import AclBinding
from tests.unit.kafka_cli import kafka

KNOWN = authorizer.AuthorizerFacts(super_users=frozenset({"User:admin"}), allow_if_no_acl=True)


def B(name="orders", principal="User:app", op="READ", perm="ALLOW", pattern="LITERAL", host="*"):
    return AclBinding("TOPIC", name, pattern, principal, host, op, perm)


BINDINGS = [
    B("orders", op="READ"),
    B("ord", pattern="PREFIXED", op="WRITE"),
    B("orders", principal="User:bob", op="WRITE", perm="DENY"),
    B("ord", principal="User:bob", pattern="PREFIXED", op="ALL"),
    B("*", principal="User:*", op="DESCRIBE"),
    B("payments", op="ALL", host="10.0.0.9"),
    B("ords", principal="User:carol", op="READ", host="::1"),  # never applies: Kafka writes 0:0:0:0:0:0:0:1
]


def _ops(row) -> dict[str, str]:
    return {o.operation: o.outcome for o in row.operations}


def test_who_can_names_each_principal_super_users_and_everyone_else():
    rows = {
        r.principal: r
        for r in authorizer.who_can(BINDINGS, resource_type="TOPIC", resource_name="orders", facts=KNOWN)
    }
    assert list(rows) == ["User:admin", "User:app", "User:bob", "User:*"]
    assert rows["User:app"].allowed == ("READ", "WRITE", "DESCRIBE")  # literal READ, prefixed WRITE, implied
    assert _ops(rows["User:bob"])["WRITE"] == "DENIED"  # the DENY beats its prefixed ALL
    assert "READ" in rows["User:bob"].allowed and "WRITE" not in rows["User:bob"].allowed
    assert set(rows["User:admin"].allowed) == set(authorizer.OPERATIONS["TOPIC"])
    anyone = rows["User:*"]
    assert anyone.anyone and anyone.allowed == ("DESCRIBE",)  # only the wildcard binding
    assert _ops(anyone)["READ"] == "DEFAULT_DENY"
    # User:carol's binding names a host no client address is ever written as: she is not listed.
    assert "User:carol" not in rows


def test_who_can_on_a_resource_without_bindings_follows_allow_everyone():
    rows = authorizer.who_can(BINDINGS, resource_type="TOPIC", resource_name="zzz", facts=KNOWN)
    anyone = next(r for r in rows if r.anyone)
    assert set(anyone.allowed) == {"DESCRIBE"}  # the wildcard * binding is a binding on every topic
    unbound = [b for b in BINDINGS if b.resource_name != "*"]
    rows = authorizer.who_can(unbound, resource_type="TOPIC", resource_name="zzz", facts=KNOWN)
    assert [r.principal for r in rows] == ["User:admin", "User:*"]
    assert set(rows[1].allowed) == set(authorizer.OPERATIONS["TOPIC"])  # NO_ACL_ALLOWED
    denying = authorizer.AuthorizerFacts(super_users=frozenset(), allow_if_no_acl=False)
    rows = authorizer.who_can(unbound, resource_type="TOPIC", resource_name="zzz", facts=denying)
    assert [(r.principal, r.allowed) for r in rows] == [("User:*", ())]
    unknown = authorizer.who_can(
        unbound, resource_type="TOPIC", resource_name="zzz", facts=authorizer.AuthorizerFacts()
    )
    assert unknown[0].unknown == authorizer.OPERATIONS["TOPIC"]


def test_what_can_lists_one_row_per_pattern_with_its_outcome():
    rows = authorizer.what_can(BINDINGS, principal="User:app", facts=KNOWN)
    by = {(r.pattern_type, r.resource_name): r for r in rows}
    assert list(by) == [("LITERAL", "*"), ("LITERAL", "orders"), ("LITERAL", "payments"), ("PREFIXED", "ord")]
    assert by[("LITERAL", "orders")].allowed == ("READ", "WRITE", "DESCRIBE")
    # A name under the prefix with no binding of its own: the prefixed WRITE (and implied DESCRIBE).
    assert by[("PREFIXED", "ord")].allowed == ("WRITE", "DESCRIBE")
    assert by[("PREFIXED", "ord")].covers == "names starting with ord"
    assert by[("LITERAL", "*")].covers == "every topic" and by[("LITERAL", "*")].allowed == ("DESCRIBE",)
    # From 10.0.0.9 only: any host's verdict is "default deny" with that address as the exception.
    payments = {o.operation: o for o in by[("LITERAL", "payments")].operations}
    assert payments["READ"].outcome == "DEFAULT_DENY" and payments["READ"].hosts[0].host == "10.0.0.9"
    bob = {
        (r.pattern_type, r.resource_name): r
        for r in authorizer.what_can(BINDINGS, principal="User:bob", facts=KNOWN)
    }
    assert bob[("LITERAL", "orders")].denied == ("WRITE",)
    assert "WRITE" in bob[("PREFIXED", "ord")].allowed
    assert authorizer.what_can(BINDINGS, principal="User:carol", facts=KNOWN)[0].resource_name == "*"
    # The topic named like the prefix is its own row: its literal READ says nothing about other names.
    same = [B("ord", op="READ"), B("ord", pattern="PREFIXED", op="WRITE")]
    rows = {r.pattern_type: r.allowed for r in authorizer.what_can(same, principal="User:app", facts=KNOWN)}
    assert rows == {"LITERAL": ("READ", "WRITE", "DESCRIBE"), "PREFIXED": ("WRITE", "DESCRIBE")}


@pytest.fixture
def world(personas, kafka_cluster):
    tag = uuid.uuid4().hex[:8]
    topic, alice, bob = f"both-{tag}", f"User:alice-{tag}", f"User:bob-{tag}"
    made = [
        B(topic, principal=alice, op="READ"),
        B(f"both-{tag}-", principal=alice, pattern="PREFIXED", op="WRITE"),
        B(topic, principal=bob, op="ALL"),
        B(topic, principal=bob, op="DELETE", perm="DENY"),
    ]
    assert acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, creates=made).ok
    kafka_cluster.acl_super_users, kafka_cluster.acl_allow_if_no_acl = "User:root", "false"
    kafka_cluster.save()
    yield {"topic": topic, "alice": alice, "bob": bob, "tag": tag}
    acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, deletes=made)


@pytest.mark.django_db
def test_the_area_answers_by_what_is_asked(personas, kafka_cluster, world):
    ask = dict(actor=personas["operator"], cluster=kafka_cluster, resource_type="TOPIC")
    who = acls.effective(**ask, principal="", resource_name=world["topic"])
    assert who.kind == "resource"
    allowed = {r.principal: set(r.allowed) for r in who.principals}
    assert allowed[world["alice"]] == {"READ", "DESCRIBE"}
    assert "DELETE" not in allowed[world["bob"]] and "ALTER" in allowed[world["bob"]]
    assert allowed["User:*"] == set() and allowed["User:root"] == set(authorizer.OPERATIONS["TOPIC"])
    mine = acls.effective(**ask, principal=world["alice"], resource_name="")
    assert mine.kind == "principal" and mine.super_user is False
    assert [(r.pattern_type, r.allowed) for r in mine.patterns] == [
        ("LITERAL", ("READ", "DESCRIBE")),
        ("PREFIXED", ("WRITE", "DESCRIBE")),
    ]
    both = acls.effective(**ask, principal=world["alice"], resource_name=world["topic"])
    assert both.kind == "both"
    for bad, message in (
        ({"principal": "", "resource_name": ""}, "give a principal, a resource, or both"),
        ({"principal": "alice", "resource_name": ""}, "must look like User:name"),
        ({"principal": world["alice"], "resource_name": "", "host": "10.0.0.1"}, "a host applies only"),
    ):
        with pytest.raises(AclValidationError, match=message):
            acls.effective(**ask, **bad)
    with pytest.raises(acls.access.PermissionDenied):
        acls.effective(**{**ask, "actor": personas["viewer"]}, principal=world["alice"], resource_name="")


@pytest.mark.django_db
def test_page_api_and_cli_answer_both_ways(client, personas, kafka_cluster, world):
    client.force_login(personas["operator"])
    url = reverse("acl_effective", kwargs={"name": kafka_cluster.name})
    page = client.get(
        url, {"principal": "", "resource_type": "TOPIC", "resource_name": world["topic"], "host": "*"}
    )
    body = page.content.decode()
    assert page.status_code == 200 and 'id="acl-who-can"' in body
    assert world["alice"] in body and "any other User" in body
    page = client.get(
        url, {"principal": world["alice"], "resource_type": "TOPIC", "resource_name": "", "host": ""}
    )
    body = page.content.decode()
    assert 'id="acl-what-can"' in body and f"names starting with both-{world['tag']}-" in body
    page = client.get(url, {"principal": "", "resource_type": "TOPIC", "resource_name": "", "host": ""})
    assert page.status_code == 200 and "give a principal, a resource, or both" in page.content.decode()

    token = tokens.create_token(actor=personas["operator"], name="t", scope="read", days=1).secret
    api = reverse("api:acls-effective", kwargs={"name": kafka_cluster.name})
    answer = client.get(
        api, {"principal": world["bob"], "resource_type": "TOPIC"}, HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    data = answer.json()
    assert answer.status_code == 200 and data["kind"] == "principal"
    assert data["patterns"][0]["resource_name"] == world["topic"]
    assert {o["operation"]: o["outcome"] for o in data["patterns"][0]["operations"]}["DELETE"] == "DENIED"
    bad = client.get(api, {"resource_type": "TOPIC"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert bad.status_code == 400 and "give a principal, a resource, or both" in bad.content.decode()

    code, out = kafka("acls", "effective", "--topic", world["topic"], "--output", "json")
    rows = {r["principal"]: r["allowed"] for r in json.loads(out)["items"]}
    assert code == 0 and rows[world["alice"]] == "READ,DESCRIBE" and rows["User:*"] == "-"
    code, out = kafka("acls", "effective", "--principal", world["alice"], "--output", "json")
    assert code == 0 and [r["pattern_type"] for r in json.loads(out)["items"]] == ["LITERAL", "PREFIXED"]
    code, _ = kafka("acls", "effective", "--topic", "a", "--group", "b")
    assert code == 2
