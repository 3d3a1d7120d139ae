"""ACLs: validation and matching (no Kafka), then list/preview/change/effective against the sandbox."""

from __future__ import annotations

import json
import uuid
from functools import partial

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from console.acls import actions as acls
from console.acls import authorizer
from console.acls import core as acl_rules
from console.clusters.actions import gateway_for
from console.identity import tokens
from console.kafka.types import AclBinding, AclBindingFilter
from console.models import AuditEvent


def B(
    name="orders", principal="User:app", op="READ", perm="ALLOW", pattern="LITERAL", rtype="TOPIC", host="*"
):
    return AclBinding(rtype, name, pattern, principal, host, op, perm)


# ---- functional core ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"principal": "app"}, "User:name"),
        ({"principal": "User:"}, "User:name"),
        ({"principal": "User:" + "x" * 300}, "at most 255"),
        ({"host": "example.com"}, "IP address"),
        ({"operation": "CLUSTER_ACTION"}, "not valid on TOPIC"),
        ({"permission": "MAYBE"}, "ALLOW or DENY"),
        ({"pattern_type": "MATCH"}, "for filters"),
        ({"resource_name": "<script>"}, "ASCII letters"),
        ({"resource_name": "ümlaut"}, "ASCII letters"),
        ({"resource_name": ""}, "required"),
        ({"resource_name": "*", "pattern_type": "PREFIXED"}, "LITERAL name"),
        ({"resource_type": "CLUSTER", "resource_name": "prod", "operation": "ALTER"}, "kafka-cluster"),
        ({"colour": "red"}, "unknown field"),
    ],
)
def test_it_refuses_invalid_bindings_with_the_reason(data, problem):
    base = {"resource_type": "TOPIC", "resource_name": "orders", "principal": "User:app", "operation": "READ"}
    binding, problems = acl_rules.validate_binding({**base, **data})
    assert binding is None
    assert any(problem in p for p in problems), problems


def test_it_fills_defaults_and_upper_cases_enums():
    binding, problems = acl_rules.validate_binding(
        {
            "resource_type": "topic",
            "name": "orders",
            "principal": "Group:ops",
            "operation": "write",
            "host": "10.0.0.1",
        }
    )
    assert problems == []
    assert binding == AclBinding("TOPIC", "orders", "LITERAL", "Group:ops", "10.0.0.1", "WRITE", "ALLOW")


def test_it_parses_yaml_and_json_batches_with_deletes():
    text = """
create:
  - {resource_type: TOPIC, resource_name: orders, principal: "User:app", operation: READ, host: "*"}
  - {resource_type: GROUP, resource_name: app-, pattern_type: PREFIXED, principal: "User:app", operation: READ}
delete:
  - {principal: "User:old"}
"""
    creates, deletes = acl_rules.parse_batch(text)
    assert [b.resource_type for b in creates] == ["TOPIC", "GROUP"]
    assert deletes == [AclBindingFilter(principal="User:old")]
    as_json = json.dumps([acl_rules.to_dict(B())])
    assert acl_rules.parse_batch(as_json) == ([B()], [])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: &x [1]\nb: *x", "aliases"),
        ("- {resource_type: TOPIC, resource_name: t, principal: User:a, operation: READ, host: *}", "YAML"),
        ("42", "paste a binding"),
        ("{create: 1}", "must be lists"),
        ("delete: [{}]", "must name"),
        ("- {resource_type: TOPIC}\n- nope", "create #2: not a mapping"),
    ],
)
def test_it_refuses_bad_batches(text, problem):
    with pytest.raises(acl_rules.AclValidationError) as err:
        acl_rules.parse_batch(text)
    assert problem in str(err.value)


def test_it_refuses_oversized_batches(monkeypatch):
    monkeypatch.setattr(acl_rules, "BATCH_MAX", 2)  # the limit lives with the parser
    with pytest.raises(acl_rules.AclValidationError, match="at most 2"):
        acl_rules.parse_batch(json.dumps([acl_rules.to_dict(B(name=f"t{i}")) for i in range(3)]))


def test_effective_access_combines_literal_prefixed_and_wildcard_and_deny_wins():
    bindings = [
        B("orders", op="READ"),
        B("ord", pattern="PREFIXED", op="WRITE"),
        B("*", principal="User:*", op="DESCRIBE_CONFIGS"),
        B("orders", op="WRITE", perm="DENY", host="10.0.0.9"),
        B("orders", principal="User:other", op="ALL"),
        B("payments", op="ALL"),
    ]
    known = authorizer.AuthorizerFacts(super_users=frozenset({"User:admin"}), allow_if_no_acl=True)
    app_on_orders = partial(
        authorizer.evaluate,
        bindings,
        principal="User:app",
        resource_type="TOPIC",
        resource_name="orders",
        facts=known,
    )
    applying, ops = app_on_orders(host="10.0.0.9")
    assert len(applying) == 4
    outcome = {o.operation: o.outcome for o in ops}
    assert outcome["READ"] == "ALLOWED"
    assert outcome["WRITE"] == "DENIED"  # the deny from this host beats the prefixed allow
    assert outcome["DESCRIBE"] == "ALLOWED"  # implied by READ
    assert outcome["DESCRIBE_CONFIGS"] == "ALLOWED"  # wildcard principal and name
    assert outcome["DELETE"] == "DEFAULT_DENY"  # the resource has bindings (User:other's), none for this
    _, elsewhere = app_on_orders(host="10.0.0.1")
    assert {o.operation: o.outcome for o in elsewhere}["WRITE"] == "ALLOWED"


def _verdicts(bindings, principal, facts, name="orders"):
    _, ops = authorizer.evaluate(
        bindings, principal=principal, host="10.0.0.1", resource_type="TOPIC", resource_name=name, facts=facts
    )
    return {o.operation: o.outcome for o in ops}


def test_super_users_are_allowed_everything_even_against_a_deny():
    facts = authorizer.AuthorizerFacts(super_users=authorizer.parse_super_users("User:admin; User:ANONYMOUS"))
    verdicts = _verdicts(
        [B("orders", principal="User:ANONYMOUS", op="ALL", perm="DENY")], "User:ANONYMOUS", facts
    )
    assert set(verdicts.values()) == {"SUPER_USER"}


@pytest.mark.parametrize(
    ("allow", "expected"), [(True, "NO_ACL_ALLOWED"), (False, "NO_ACL_DENIED"), (None, "UNKNOWN")]
)
def test_a_resource_without_bindings_follows_allow_everyone_if_no_acl_found(allow, expected):
    facts = authorizer.AuthorizerFacts(super_users=frozenset(), allow_if_no_acl=allow)
    # A binding on another topic does not count: only bindings matching this resource do.
    verdicts = _verdicts([B("payments", principal="User:bob", op="ALL")], "User:bob", facts)
    assert set(verdicts.values()) == {expected}


def test_without_super_users_known_a_denial_is_unknown_and_says_why():
    facts = authorizer.AuthorizerFacts(super_users=None, allow_if_no_acl=True)
    _, ops = authorizer.evaluate(
        [B("orders", principal="User:other", op="READ")], principal="User:bob", host="*",
        resource_type="TOPIC", resource_name="orders", facts=facts,
    )  # fmt: skip
    read = next(o for o in ops if o.operation == "READ")
    assert read.outcome == "UNKNOWN" and read.allowed is None and "super user" in read.note
    allowed = _verdicts([B("orders", principal="User:bob", op="READ")], "User:bob", facts)["READ"]
    assert allowed == "ALLOWED"  # an ALLOW needs no assumption


def test_it_gives_a_blank_host_the_verdict_from_any_host_and_from_each_host_with_its_own_bindings():
    # Kafka's StandardAuthorizer matches a binding when its host is * or the client's address; a
    # blank host means "any host", so a binding for one host must show up with its own verdict.
    bindings = [
        B("orders", principal="User:alice", op="READ"),
        B("orders", principal="User:alice", op="READ", perm="DENY", host="127.0.0.1"),
        B("orders", principal="User:alice", op="WRITE", host="10.0.0.7"),
        B("orders", principal="User:bob", op="ALL", perm="DENY", host="10.0.0.8"),  # another principal
    ]
    facts = authorizer.AuthorizerFacts(super_users=frozenset({"User:admin"}), allow_if_no_acl=True)
    applying, ops = authorizer.evaluate(
        bindings, principal="User:alice", host="*", resource_type="TOPIC", resource_name="orders", facts=facts
    )
    assert applying == [bindings[1], bindings[0], bindings[2]]  # DENY first; bob's binding does not apply
    by_op = {o.operation: o for o in ops}
    read = by_op["READ"]
    assert (read.outcome, read.deciding) == ("ALLOWED", (bindings[0],))
    assert [(h.host, h.outcome, h.deciding) for h in read.hosts] == [("127.0.0.1", "DENIED", (bindings[1],))]
    assert read.verdict == "allowed from any host except 127.0.0.1: denied by a DENY"
    write = by_op["WRITE"]
    assert [(h.host, h.outcome) for h in write.hosts] == [("10.0.0.7", "ALLOWED")]
    assert write.verdict == (
        "denied (the resource has bindings, none allows this) from any host except 10.0.0.7: allowed"
    )
    # A DENY READ does not deny DESCRIBE (only an ALLOW implies it), and WRITE from 10.0.0.7 allows it
    # there too: the same verdict everywhere, so no host is singled out.
    assert (by_op["DESCRIBE"].outcome, by_op["DESCRIBE"].hosts, by_op["DESCRIBE"].verdict) == (
        "ALLOWED",
        (),
        "allowed",
    )
    # A host typed in gets that host's verdict alone, as before.
    _, typed = authorizer.evaluate(
        bindings, principal="User:alice", host="127.0.0.1", resource_type="TOPIC", resource_name="orders",
        facts=facts,
    )  # fmt: skip
    read_there = next(o for o in typed if o.operation == "READ")
    assert (read_there.outcome, read_there.hosts, read_there.verdict) == ("DENIED", (), "denied by a DENY")
    # A super user is allowed from every host: nothing to single out.
    _, admin = authorizer.evaluate(
        [*bindings, B("orders", principal="User:admin", op="ALL", perm="DENY", host="127.0.0.1")],
        principal="User:admin", host="*", resource_type="TOPIC", resource_name="orders", facts=facts,
    )  # fmt: skip
    assert {(o.outcome, o.hosts) for o in admin} == {("SUPER_USER", ())}


def test_it_compares_a_binding_s_host_with_the_address_as_kafka_writes_it():
    # StandardAuthorizerData compares the binding's host with clientAddress().getHostAddress():
    # Java writes an IPv6 address in full (0:0:0:0:0:0:0:1), so a binding written ::1 never matches.
    assert authorizer.client_address("::1") == "0:0:0:0:0:0:0:1"
    assert authorizer.client_address("2001:DB8::0a") == "2001:db8:0:0:0:0:0:a"
    assert authorizer.client_address("::ffff:10.0.0.1") == "10.0.0.1"
    assert authorizer.client_address("127.0.0.1") == "127.0.0.1"
    assert authorizer.client_address("localhost") is None
    bindings = [
        B(principal="User:alice"),
        B(principal="User:alice", perm="DENY", host="0:0:0:0:0:0:0:1"),
        B(principal="User:alice", perm="DENY", host="::1"),
        B(principal="User:alice", perm="DENY", host="localhost"),
    ]
    facts = authorizer.AuthorizerFacts(super_users=frozenset(), allow_if_no_acl=True)
    ask = {"principal": "User:alice", "resource_type": "TOPIC", "resource_name": "orders", "facts": facts}
    applying, ops = authorizer.evaluate(bindings, host="::1", **ask)
    assert applying == [bindings[1], bindings[0]]
    read = next(o for o in ops if o.operation == "READ")
    assert (read.outcome, read.deciding) == ("DENIED", (bindings[1],))
    applying, ops = authorizer.evaluate(bindings, host="*", **ask)
    assert applying == [bindings[1], bindings[0]]
    read = next(o for o in ops if o.operation == "READ")
    assert read.verdict == "allowed from any host except 0:0:0:0:0:0:0:1: denied by a DENY"
    never = authorizer.never_matching(
        bindings, principal="User:alice", resource_type="TOPIC", resource_name="orders"
    )
    assert never == [bindings[2], bindings[3]]


# ---- against the sandbox -----------------------------------------------------------------------


@pytest.fixture
def uniq():
    return "t" + uuid.uuid4().hex[:10]


@pytest.mark.django_db
def test_it_creates_then_lists_grouped_and_filtered(personas, kafka_cluster, uniq):
    operator = personas["operator"]
    wanted = [B(uniq, op="READ"), B(uniq, op="WRITE"), B(uniq, principal="User:other", op="READ")]
    change = acls.change_acls(actor=operator, cluster=kafka_cluster, creates=wanted)
    assert change.ok and [r.message for r in change.results] == ["created"] * 3
    listing = acls.list_acls(
        actor=operator,
        cluster=kafka_cluster,
        acl_filter=AclBindingFilter(resource_name=uniq),
        group_by="principal",
    )
    assert listing.total == 3 and dict(listing.groups) == {"User:app": 2, "User:other": 1}
    assert listing.rows[0].principal == "User:app"
    only_reads = acls.list_acls(
        actor=operator,
        cluster=kafka_cluster,
        acl_filter=AclBindingFilter(resource_name=uniq, operation="READ"),
        group_by="resource",
    )
    assert only_reads.total == 2 and only_reads.groups == [(f"TOPIC:LITERAL:{uniq}", 2)]
    event = AuditEvent.objects.get(action="acl.create")
    assert event.outcome == "success" and len(event.targets) == 3 and event.actor_name == "operator"
    assert AuditEvent.objects.get(action="acl.change").outcome == "requested"


@pytest.mark.django_db
def test_match_filters_find_prefixed_and_wildcard_bindings(personas, kafka_cluster, uniq):
    acls.change_acls(
        actor=personas["admin"],
        cluster=kafka_cluster,
        creates=[B(uniq[:5], pattern="PREFIXED", principal=f"User:{uniq}"), B("*", principal=f"User:{uniq}")],
    )
    matched = acls.list_acls(
        actor=personas["admin"],
        cluster=kafka_cluster,
        acl_filter=AclBindingFilter(resource_type="TOPIC", resource_name=uniq, pattern_type="MATCH"),
    )
    assert {(b.pattern_type, b.resource_name) for b in matched.rows if b.principal == f"User:{uniq}"} == {
        ("PREFIXED", uniq[:5]),
        ("LITERAL", "*"),
    }


@pytest.mark.django_db
def test_delete_by_filter_previews_then_deletes_exactly_the_confirmed_bindings(personas, kafka_cluster, uniq):
    op = personas["operator"]
    keep, drop = B(uniq, op="WRITE"), B(uniq, op="READ")
    acls.change_acls(actor=op, cluster=kafka_cluster, creates=[keep, drop])
    matched = acls.preview_delete(
        actor=op, cluster=kafka_cluster, filters=[AclBindingFilter(resource_name=uniq)]
    )
    assert set(matched) == {keep, drop}
    added = B(uniq, op="ALTER")
    change = acls.change_acls(
        actor=op, cluster=kafka_cluster, deletes=[drop, B(uniq, op="DELETE")], creates=[added]
    )
    assert [(r.action, r.ok, r.message) for r in change.results] == [
        ("delete", True, "deleted"),
        ("delete", True, "already absent"),
        ("create", True, "created"),
    ]
    gateway = gateway_for(kafka_cluster)
    assert set(gateway.describe_acls(AclBindingFilter(resource_name=uniq))) == {keep, added}
    deleted = AuditEvent.objects.get(action="acl.delete")
    assert deleted.before == [acl_rules.to_dict(drop), acl_rules.to_dict(B(uniq, op="DELETE"))]
    assert (
        deleted.id
        < AuditEvent.objects.get(action="acl.create", after__isnull=False, targets__icontains="ALTER").id
    )


@pytest.mark.django_db
def test_effective_access_reads_the_bindings_from_kafka(personas, kafka_cluster, uniq):
    principal = f"User:{uniq}"
    acls.change_acls(
        actor=personas["operator"],
        cluster=kafka_cluster,
        creates=[
            B(uniq, principal=principal, op="READ"),
            B(uniq, principal=principal, op="READ", perm="DENY"),
        ],
    )

    def ask():
        return acls.effective_access(
            actor=personas["operator"], cluster=kafka_cluster, principal=principal,
            resource_type="TOPIC", resource_name=uniq,
        )  # fmt: skip

    # Kafka (and the sandbox) hide super.users and allow.everyone.if.no.acl.found: nothing assumed.
    result = ask()
    assert (result.facts.super_users, result.facts.allow_if_no_acl) == (None, None)
    assert {o.operation: o.outcome for o in result.operations}["READ"] == "UNKNOWN"
    kafka_cluster.acl_super_users, kafka_cluster.acl_allow_if_no_acl = "User:admin", "true"
    kafka_cluster.save()
    result = ask()
    assert result.facts.super_users_from == "the cluster's settings"
    assert {o.operation: o.outcome for o in result.operations}["READ"] == "DENIED"


@pytest.mark.django_db
def test_it_lists_host_bindings_and_their_verdicts_on_the_page_and_the_api_when_no_host_is_given(
    client, personas, kafka_cluster, uniq
):
    allow, deny = (
        B(uniq, principal="User:alice"),
        B(uniq, principal="User:alice", perm="DENY", host="127.0.0.1"),
    )
    assert acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, creates=[allow, deny]).ok
    kafka_cluster.acl_super_users, kafka_cluster.acl_allow_if_no_acl = "User:admin", "true"
    kafka_cluster.save()
    query = {"principal": "User:alice", "resource_type": "TOPIC", "resource_name": uniq, "host": ""}
    result = acls.effective_access(
        actor=personas["operator"], cluster=kafka_cluster, principal="User:alice",
        resource_type="TOPIC", resource_name=uniq,
    )  # fmt: skip
    assert result.host == "*" and result.applying == [deny, allow] and result.hosts == ["127.0.0.1"]
    read = next(o for o in result.operations if o.operation == "READ")
    assert read.verdict == "allowed from any host except 127.0.0.1: denied by a DENY"
    client.force_login(personas["operator"])
    page = client.get(reverse("acl_effective", kwargs={"name": kafka_cluster.name}), query)
    body = page.content.decode()
    assert page.status_code == 200 and "from any host" in body
    assert "allowed from any host except 127.0.0.1: denied by a DENY" in body
    assert f"User:alice DENY READ on TOPIC:LITERAL:{uniq} from 127.0.0.1" in body
    token = tokens.create_token(actor=personas["operator"], name="t", scope="read", days=1).secret
    answer = client.get(
        reverse("api:acls-effective", kwargs={"name": kafka_cluster.name}),
        query,
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["host"] == "*" and data["hosts"] == ["127.0.0.1"]
    assert {(b["host"], b["permission"]) for b in data["applying"]} == {("127.0.0.1", "DENY"), ("*", "ALLOW")}
    api_read = next(o for o in data["operations"] if o["operation"] == "READ")
    assert api_read["outcome"] == "ALLOWED" and api_read["verdict"] == read.verdict
    assert [(h["host"], h["outcome"]) for h in api_read["hosts"]] == [("127.0.0.1", "DENIED")]
    acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, deletes=[allow, deny])


@pytest.mark.django_db
def test_it_shows_bindings_whose_host_kafka_never_matches(client, personas, kafka_cluster, uniq):
    written_short = B(uniq, principal="User:carol", perm="DENY", host="::1")
    written_full = B(uniq, principal="User:carol", perm="DENY", host="0:0:0:0:0:0:0:1")
    allow = B(uniq, principal="User:carol")
    creates = [written_short, written_full, allow]
    assert acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, creates=creates).ok
    kafka_cluster.acl_super_users, kafka_cluster.acl_allow_if_no_acl = "User:admin", "true"
    kafka_cluster.save()
    try:
        result = acls.effective_access(
            actor=personas["operator"], cluster=kafka_cluster, principal="User:carol",
            resource_type="TOPIC", resource_name=uniq, host="::1",
        )  # fmt: skip
        assert result.host == "0:0:0:0:0:0:0:1" and result.never_matching == [written_short]
        assert next(o for o in result.operations if o.operation == "READ").deciding == (written_full,)
        client.force_login(personas["operator"])
        query = {"principal": "User:carol", "resource_type": "TOPIC", "resource_name": uniq}
        page = client.get(reverse("acl_effective", kwargs={"name": kafka_cluster.name}), query)
        body = page.content.decode()
        assert 'id="acl-never-matching"' in body and f"TOPIC:LITERAL:{uniq} from ::1</li>" in body
    finally:
        acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, deletes=creates)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["requester", "auditor", "viewer"])
def test_only_operators_and_admins_may_change_acls(personas, kafka_cluster, role):
    with pytest.raises(acls.PermissionDenied if hasattr(acls, "PermissionDenied") else Exception):
        acls.change_acls(actor=personas[role], cluster=kafka_cluster, creates=[B()])
    assert not AuditEvent.objects.filter(action__startswith="acl.").exclude(outcome="refused").exists()
    assert AuditEvent.objects.filter(action="acl.change", outcome="refused").count() == 1


# ---- pages -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_pages_review_then_apply_with_csrf(personas, kafka_cluster, uniq):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["operator"])
    new_url = reverse("acl_new", kwargs={"name": kafka_cluster.name})
    page = client.get(new_url)
    token = page.cookies[settings.CSRF_COOKIE_NAME].value
    text = json.dumps({"create": [acl_rules.to_dict(B(uniq))]})
    review = client.post(new_url, {"mode": "batch", "text": text, "csrfmiddlewaretoken": token})
    assert review.status_code == 200 and b"Create 1 binding" in review.content
    value = json.dumps(acl_rules.to_dict(B(uniq)), sort_keys=True)
    apply_url = reverse("acl_apply", kwargs={"name": kafka_cluster.name})
    assert client.post(apply_url, {"create": value}).status_code == 403  # no CSRF token
    applied = client.post(apply_url, {"create": value, "csrfmiddlewaretoken": token})
    assert applied.status_code == 200 and b"Every binding was applied" in applied.content
    listing = client.get(reverse("acl_list", kwargs={"name": kafka_cluster.name}), {"resource_name": uniq})
    assert uniq.encode() in listing.content and b"1 binding" in listing.content
    delete = client.get(reverse("acl_delete", kwargs={"name": kafka_cluster.name}), {"resource_name": uniq})
    assert delete.status_code == 200 and delete.content.count(b'name="delete"') == 1


@pytest.mark.django_db
def test_hostile_input_is_refused_and_escaped(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    evil = "<script>alert(1)</script>"
    new_url = reverse("acl_new", kwargs={"name": kafka_cluster.name})
    single = client.post(
        new_url,
        {
            "mode": "single",
            "resource_type": "TOPIC",
            "pattern_type": "LITERAL",
            "resource_name": evil,
            "principal": f"User:{evil}",
            "host": "*",
            "operation": "READ",
            "permission": "ALLOW",
        },
    )
    assert single.status_code == 200
    assert b"<script>alert" not in single.content and b"ASCII letters" in single.content
    batch = client.post(new_url, {"mode": "batch", "text": "x" * (acl_rules.BATCH_TEXT_MAX + 1)})
    assert batch.status_code == 200 and b"at most" in batch.content
    forged = client.post(
        reverse("acl_apply", kwargs={"name": kafka_cluster.name}), {"create": json.dumps({"principal": evil})}
    )
    assert b"<script>alert" not in forged.content and b"User:name" in forged.content
    listing = client.get(reverse("acl_list", kwargs={"name": kafka_cluster.name}), {"principal": evil})
    assert listing.status_code == 200 and b"<script>alert" not in listing.content
    effective = client.get(
        reverse("acl_effective", kwargs={"name": kafka_cluster.name}),
        {"principal": "nobody", "resource_type": "TOPIC", "resource_name": "x"},
    )
    assert b"User:name" in effective.content


@pytest.mark.django_db
def test_an_unreachable_cluster_is_a_message_not_a_500(client, offline_cluster):
    from tests.conftest import make_personas

    people = make_personas(offline_cluster)
    client.force_login(people["operator"])
    base = f"/c/{offline_cluster.name}/acls/"
    listing = client.get(base)
    assert listing.status_code == 200 and b"Kafka could not list the ACLs" in listing.content
    effective = client.get(
        base + "effective/", {"principal": "User:app", "resource_type": "TOPIC", "resource_name": "orders"}
    )
    assert effective.status_code == 200 and b"error-box" in effective.content
    value = json.dumps(acl_rules.to_dict(B()))
    applied = client.post(base + "apply/", {"create": value})
    assert applied.status_code == 200 and b"failed" in applied.content
    event = AuditEvent.objects.get(action="acl.create")
    assert event.outcome == "failure"


@pytest.mark.django_db
def test_a_mixed_batch_is_reviewed_with_the_matched_deletes_first(client, personas, kafka_cluster, uniq):
    acls.change_acls(
        actor=personas["operator"], cluster=kafka_cluster, creates=[B(uniq, principal="User:old")]
    )
    client.force_login(personas["operator"])
    text = (
        f"delete:\n  - {{principal: 'User:old', resource_name: {uniq}}}\n"
        f"create:\n  - {{resource_type: TOPIC, resource_name: {uniq}, principal: 'User:new', operation: READ}}\n"
    )
    review = client.post(
        reverse("acl_new", kwargs={"name": kafka_cluster.name}), {"mode": "batch", "text": text}
    )
    body = review.content.decode()
    assert body.index("Delete 1 binding") < body.index("Create 1 binding")
    assert "User:old" in body and "User:new" in body


@pytest.mark.django_db
def test_the_page_states_what_it_assumed(client, personas, kafka_cluster, uniq):
    client.force_login(personas["operator"])
    url = reverse("acl_effective", kwargs={"name": kafka_cluster.name})
    query = {"principal": "User:bob", "resource_type": "TOPIC", "resource_name": uniq}
    body = client.get(url, query).content.decode()
    assert "What this answer assumes" in body and body.count("<strong>unknown</strong>") == 2
    kafka_cluster.acl_super_users, kafka_cluster.acl_allow_if_no_acl = "User:admin;User:ANONYMOUS", "true"
    kafka_cluster.save()
    body = client.get(url, query).content.decode()
    assert body.count("from the cluster&#x27;s settings") == 2 and "<strong>unknown</strong>" not in body


def test_the_list_reads_and_groups_with_the_collector_paused(personas, kafka_cluster, monkeypatch):
    import gc

    from console.acls.actions import group_key as real_group_key

    seen = []

    def group_key(*args):
        seen.append(gc.isenabled())
        return real_group_key(*args)

    monkeypatch.setattr(acls, "group_key", group_key)
    operator = personas["operator"]
    binding = B("gc-topic", principal=f"User:gc-{uuid.uuid4().hex[:6]}")
    assert acls.change_acls(actor=operator, cluster=kafka_cluster, creates=[binding]).ok
    listing = acls.list_acls(actor=operator, cluster=kafka_cluster, acl_filter=acl_rules.validate_filter({}))
    assert listing.total >= 1 and seen and not any(seen)
    assert gc.isenabled()
