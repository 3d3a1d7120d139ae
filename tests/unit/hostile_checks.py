"""What an accepted hostile post may have changed (complete changes only), and the fixtures' upkeep."""

from __future__ import annotations

import json
import socket

from hypothesis import strategies as st

from console.acls import core as acl_core
from console.models import Cluster, Role, RoleBinding
from console.models.requests import ChangeRequest, RequestState

ACL_VALUES = {
    "resource_type": acl_core.RESOURCE_TYPES,
    "resource_name": ("hostile-acl", "*", "kafka-cluster", "hostile-"),
    "pattern_type": acl_core.PATTERN_TYPES,
    "principal": ("User:hostile", "Group:hostile", "User:*"),
    "host": ("*", "10.0.0.1"),
    "operation": acl_core.ALL_OPERATIONS,
    "permission": acl_core.PERMISSIONS,
}
OTHER = {
    "name": "hostile-other",
    "description": "",
    "bootstrap_servers": "127.0.0.1:1",
    "bootstrap_controllers": "",
    "security_protocol": "PLAINTEXT",
    "sasl_mechanism": "",
    "sasl_username": "",
    "sasl_password_encrypted": "",
    "ca_certificate": "",
    "request_timeout_s": 1,
}


def to_json(binding: dict) -> str:
    return json.dumps({k: v.decode("latin-1") if isinstance(v, bytes) else v for k, v in binding.items()})


def no_network(monkeypatch, sandbox) -> None:
    """Connections go to the sandbox's nodes only; any other address is refused at once (no DNS)."""
    real = socket.create_connection
    nodes = [*sandbox.state.brokers.values(), *sandbox.state.controllers.values()]
    allowed = {("127.0.0.1", n.port) for n in nodes} | {("localhost", n.port) for n in nodes}

    def connect(address, *args, **kwargs):
        if tuple(address[:2]) not in allowed:
            raise ConnectionRefusedError(f"hostile-input tests: no connection to {address!r}")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", connect)


# -- upkeep of the objects the URLs point at ------------------------------------------------------


def fresh_requests(env) -> None:
    """A pending request by the requester (to approve or reject) and one by the admin (to cancel)."""
    from console.requests import actions as requests

    for key, actor in (("request", env.personas["requester"]), ("own_request", env.admin)):
        pk = env.ids.get(key)
        if pk and ChangeRequest.objects.filter(pk=pk, state=RequestState.PENDING).exists():
            continue
        req = requests.submit_request(
            actor=actor,
            cluster=env.cluster,
            kind="topic.create",
            payload={
                "name": f"team-a.hostile-{ChangeRequest.objects.count()}",
                "partitions": 1,
                "replication_factor": 1,
                "configs": {},
            },
            reason="hostile-input test",
        )
        env.ids[key] = req.pk


def restore_other(env) -> None:
    if Cluster.objects.filter(pk=env.other.pk).update(**OTHER) == 0:
        env.other = Cluster.objects.create(**OTHER)


def restore_binding(env) -> None:
    if not RoleBinding.objects.filter(pk=env.ids["binding"]).exists():
        binding = RoleBinding.objects.create(
            cluster=env.cluster, user=env.personas["viewer"], role=Role.VIEWER
        )
        env.ids["binding"] = binding.pk


def relogin(env) -> None:
    env.client.force_login(env.admin)


def other_kw(env) -> st.SearchStrategy:
    return st.one_of(
        st.just({"name": env.other.name}), st.sampled_from([{"name": "no-such"}, {"name": "a" * 80}])
    )


def controller_kw(env) -> st.SearchStrategy:
    nodes = st.one_of(st.just(env.ids["node"]), st.integers(0, 2**63 - 1))
    return st.builds(lambda n: {"name": env.ctl.name, "node_id": n}, nodes)


# -- checks of accepted posts: (before, after) are (kafka, db) snapshots ----------------------------


def anything(env, before, after, response, where) -> None:
    """Accepted work whose effects are the runner's (queued) or Kafka's own (put back after)."""


def unchanged(env, before, after, response, where) -> None:
    assert after == before, f"a preview or search changed state: {where}"


def db_only(env, before, after, response, where) -> None:
    assert after[0] == before[0], f"a console-only form changed Kafka: {where}"


def _context(response, key):
    for context in response.context or []:
        if key in context:
            return context[key]
    return None


def _topic_changes(before, after) -> tuple[set, set, set]:
    b, a = before[0]["topics"], after[0]["topics"]
    return set(a) - set(b), set(b) - set(a), {n for n in set(a) & set(b) if a[n] != b[n]}


def _rest_same(before, after, *, but: str, where: str) -> None:
    for key in before[0]:
        if key == "starts" and but == "topics":  # log starts come and go with topics and partitions
            b, a = before[0][key], after[0][key]
            moved = [n for n in b.keys() & a.keys() if a[n][: len(b[n])] != b[n][: len(a[n])]]
            assert not moved, f"log starts of {moved} changed too: {where}"
        elif key != but:
            assert before[0][key] == after[0][key], f"{key} changed too: {where}"
    assert before[1] == after[1], f"the console's rows changed: {where}"


def topics_created(env, before, after, response, where) -> None:
    """New topics are exactly the ones reported created, each with every partition; nothing else moved."""
    _rest_same(before, after, but="topics", where=where)
    new, gone, changed = _topic_changes(before, after)
    assert not gone and not changed, f"create touched existing topics {gone | changed}: {where}"
    result = _context(response, "result")
    if response.status_code == 302 or response.has_header("HX-Redirect"):  # one topic created: its page
        assert len(new) == 1, f"{new}: {where}"
        return
    reported = {o.name for o in result.outcomes if o.ok and not result.validate_only} if result else set()
    assert new == reported, f"created {sorted(new)} but reported {sorted(reported)}: {where}"


def topics_deleted(env, before, after, response, where) -> None:
    _rest_same(before, after, but="topics", where=where)
    new, gone, changed = _topic_changes(before, after)
    assert not new and not changed, where
    names = set(_context(response, "names") or [])
    assert gone <= names, f"deleted {gone} not in {names}: {where}"
    result = _context(response, "result")
    if gone:
        assert result is not None, where


def partitions_added(env, before, after, response, where) -> None:
    _rest_same(before, after, but="topics", where=where)
    new, gone, changed = _topic_changes(before, after)
    topic = response.wsgi_request.resolver_match.kwargs["topic"]
    assert not new and not gone and changed <= {topic}, where
    for name in changed:
        old, now = before[0]["topics"][name][0], after[0]["topics"][name][0]
        assert now[: len(old)] == old and len(now) > len(old), f"{name}: {old} -> {now}: {where}"


def configs_only(env, before, after, response, where) -> None:
    topic = response.wsgi_request.resolver_match.kwargs.get("topic")
    for key in ("acls", "logger_levels") + (("broker_configs",) if topic else ()):
        assert before[0][key] == after[0][key], f"{key} changed: {where}"
    assert before[1] == after[1], where
    b, a = before[0]["topics"], after[0]["topics"]
    assert set(a) == set(b), where
    for name in b:
        assert a[name][0] == b[name][0], f"partitions of {name} changed: {where}"
        if name != topic:
            assert a[name][1] == b[name][1], f"configs of {name} changed: {where}"


def acls_applied(env, before, after, response, where) -> None:
    _rest_same(before, after, but="acls", where=where)
    change = _context(response, "change")
    b, a = set(before[0]["acls"]), set(after[0]["acls"])
    if change is None:
        assert a == b, where
        return
    touched = {(r.binding.resource_name, r.binding.principal, r.binding.host) for r in change.results}
    for entry in a ^ b:
        assert (entry.resource_name, entry.principal, entry.host) in touched, f"{entry} changed: {where}"
    for r in change.results:
        key = (r.binding.resource_name, r.binding.principal, r.binding.host)
        present = any((e.resource_name, e.principal, e.host) == key for e in a)
        if r.ok and r.action == "create":
            assert present, f"reported created but absent: {r.binding}: {where}"
