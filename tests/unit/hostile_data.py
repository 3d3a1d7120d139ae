"""Hostile input to the message browser (issue 40): the browse form (a GET: it changes nothing), the
produce form (a refused post writes no record; an accepted one writes exactly the record it reports)
and the data-access page (grants and masking rules: console rows only, never Kafka)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.unit import hostile_checks as checks
from tests.unit.hostile_forms import MAIN, PATH_JUNK, nothing
from tests.unit.hostile_harness import Env, Route
from tests.unit.hostile_values import NUMBER, either, form

MOMENTS = ("2030-01-01T02:00", "2020-01-01T00:00", "2030-13-45T99:99", "9999-12-31T23:59", "1-1-1", "")


def topic_kw(env: Env) -> st.SearchStrategy:
    topics = st.one_of(st.sampled_from([MAIN, MAIN, MAIN, "no-such-topic"]), PATH_JUNK)
    return st.builds(lambda t: {"name": env.cluster.name, "topic": t}, topics)


def browse_get(env: Env) -> st.SearchStrategy:
    return form(
        {
            "mode": either("newest", "oldest", "offset", "timestamp", "follow", "sideways"),
            "partition": NUMBER,
            "offset": either("0", "1", "-1", "9223372036854775807", "9223372036854775808", "x"),
            "timestamp": either(*MOMENTS),
            "count": either("1", "50", "500", "501", "0", "-3", "1e9"),
            "cursor": either("", "{}", '{"0": 3}', '{"x": "y"}', "[1,2]", "{" * 500, '{"0": -1}'),
            "key": either("", "k", "\x00"),
            "header": either("", "trace", "trace=1", "=", "a=b=c"),
            "value": either("", "4111", "\ud800"),
            "json_path": either("", "$.card", "$[", "$..*", "$.a[?(@.b > 1)]", "x" * 600),
            "decode": either("auto", "text", "json", "hex", "avro"),
            "reason": either("", "incident 42", " ", "x" * 2000),
        }
    )


def produce_form(env: Env) -> st.SearchStrategy:
    return form(
        {
            "partition": NUMBER,
            "key": either("", "k1", "\x00", "x" * 100_001),
            "value": either("", "{}", '{"card": "4111"}', "\ud800"),
            "headers": either("", "trace=1", "=x", "no-equals", "a=1\n\nb", "x" * 3000),
            "action": either("", "fill", "send"),
        }
    )


def _ends(env: Env) -> list[int]:
    return [p.end_offset for p in env.sandbox.state.topics[MAIN].partitions]


def produced_only(env: Env, before, after, response, where) -> None:
    """Kafka's topics, configs and ACLs as they were; one record more exactly where the page says."""
    checks.db_only(env, before, after, response, where)
    produced = next((c["produced"] for c in response.context or [] if c.get("produced")), None)
    ends = _ends(env)
    topic = response.wsgi_request.resolver_match.kwargs.get("topic")
    if produced is None or topic != MAIN:
        assert ends == env.ids["ends"], f"a refused produce wrote records: {where}"
        return
    expected = list(env.ids["ends"])
    expected[produced.partition] += 1
    assert ends == expected and produced.offset == env.ids["ends"][produced.partition], where
    env.ids["ends"] = ends


def produce_kw(env: Env) -> st.SearchStrategy:
    env.ids["ends"] = _ends(env)
    return topic_kw(env)


def grant_form(env: Env) -> st.SearchStrategy:
    return form(
        {
            "add": either("grant", "rule", "", "both"),
            "grant-user": either("", str(env.admin.pk), "0", "x"),
            "grant-group": either("", "1", "x"),
            "grant-prefix": either("", "hostile", "x" * 300, "\x00"),
            "grant-read": either("on", ""),
            "grant-write": either("on", ""),
            "grant-unmasked": either("on", ""),
            "rule-prefix": either("", "hostile", "x" * 300),
            "rule-kind": either("json_path", "header", "regex", "sql"),
            "rule-expression": either("", "$.card", "$[", "(", "\\d{4}", "a" * 5000, "trace"),
            "rule-note": either("", "pci", "x" * 501),
        }
    )


def by_id(field: str) -> object:
    def kwargs(env: Env) -> st.SearchStrategy:
        return st.builds(
            lambda i: {"name": env.cluster.name, field: i},
            st.one_of(st.integers(0, 2**63 - 1), st.just(1)),
        )

    return kwargs


def routes() -> list[Route]:
    return [
        Route("messages", 200, browse_get, topic_kw, method="get", check=checks.unchanged),
        Route("messages_produce", 200, produce_form, produce_kw, check=produced_only),
        Route(
            "data_access",
            200,
            grant_form,
            lambda env: st.just({"name": env.cluster.name}),
            check=checks.db_only,
        ),
        Route("data_grant_remove", 60, nothing, by_id("grant_id"), check=checks.db_only),
        Route("masking_rule_remove", 60, nothing, by_id("rule_id"), check=checks.db_only),
    ]
