"""The API's body limits and its error answers outside the views (issue 33, item 8).

A body nested past ``uploads.MAX_DEPTH`` is a JSON 400 (it reached Python's recursion limit: an HTML
500), a body over DATA_UPLOAD_MAX_MEMORY_SIZE a JSON 413 (an HTML 400); a path no API route matches
is a JSON 404 and a bug a JSON 500, while the pages keep their HTML. tests/unit/test_api_hostile.py
sends every kind of junk to every route; these pin the answers themselves.
"""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import RequestDataTooBig
from django.test import Client, RequestFactory
from django.urls import reverse

from console.api import errors, topics
from console.identity import tokens
from console.models import AuditEvent, ChangeRequest
from console.reassignment.planner import PlanParseError, parse_plan
from console.uploads import MAX_DEPTH, UploadError, load_json

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(personas) -> Client:
    """The admin's write token on a client that answers a bug with the 500 page (as a server does)."""
    secret = tokens.create_token(actor=personas["admin"], name="t", scope="write", days=1).secret
    return Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {secret}")


def _topics(cluster) -> str:
    return reverse("api:topics", kwargs={"name": cluster.name})


def test_it_answers_a_body_nested_past_the_limit_with_a_json_400_and_creates_nothing(
    api, kafka_cluster, sandbox
):
    deep = '{"name": "deep", "partitions": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    topics_before = set(sandbox.state.topics)
    answer = api.post(_topics(kafka_cluster), deep, content_type="application/json")
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"
    assert answer.json() == {
        "error": {
            "status": 400,
            "code": "parse_error",
            "message": f"JSON parse error - line 1, column {deep.index('[') + MAX_DEPTH}: "
            f"nested deeper than {MAX_DEPTH} levels",  # where the level one too many opens
        }
    }
    assert set(sandbox.state.topics) == topics_before
    assert not AuditEvent.objects.filter(action__startswith="topic").exists()


def test_it_reads_a_body_as_deep_as_the_limit(api, kafka_cluster):
    """MAX_DEPTH levels are read (the serializer then refuses the member's type, not the parser)."""
    body = '{"name": "x", "partitions": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    answer = api.post(_topics(kafka_cluster), body, content_type="application/json")
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid"
    assert answer.json()["error"]["fields"] == {"partitions": ["A valid integer is required."]}


def test_it_answers_a_body_over_the_upload_limit_with_a_json_413(api, kafka_cluster, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    body = json.dumps({"name": "x" * 1_000})
    for key in ({}, {"HTTP_IDEMPOTENCY_KEY": "big"}):  # the key's body hash reads the body first
        answer = api.post(_topics(kafka_cluster), body, content_type="application/json", **key)
        assert answer.status_code == 413 and answer["Content-Type"] == "application/json"
        assert answer.json() == {
            "error": {
                "status": 413,
                "code": "too_large",
                "message": "The request body is over 1,000 bytes (DATA_UPLOAD_MAX_MEMORY_SIZE).",
            }
        }
    assert not ChangeRequest.objects.exists()
    # Django's own handler answers the same when the body is read before any API view (a middleware)
    outside = errors.bad_request(RequestFactory().post("/api/v1/clusters/"), RequestDataTooBig("over"))
    assert outside.status_code == 413 and json.loads(outside.content)["error"]["code"] == "too_large"
    page = errors.bad_request(RequestFactory().post("/login/"), RequestDataTooBig("over"))
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")


def test_it_refuses_nan_infinity_a_lone_surrogate_and_a_charset_that_is_no_text(api, kafka_cluster):
    url = _topics(kafka_cluster)
    for body, content_type, says in (
        ('{"name": "x", "partitions": NaN}', "application/json", "NaN is not a JSON number"),
        ('{"name": "x", "partitions": -Infinity}', "application/json", "-Infinity is not a JSON number"),
        ('{"name": "\\ud800x"}', "application/json", "unpaired surrogate"),
        ('{"name": "x"}', "application/json; charset=rot13", "The body is not rot13 text"),
    ):
        answer = api.generic("POST", url, body.encode(), content_type=content_type)  # bytes as they are
        assert answer.status_code == 400, body
        assert answer.json()["error"]["code"] == "parse_error" and says in answer.json()["error"]["message"]


def test_it_answers_a_path_no_api_route_matches_with_a_json_404(api, kafka_cluster, client, personas):
    for path in (
        "/api/v1/nothing-here/",
        f"/api/v1/clusters/{kafka_cluster.name}/reassignments/not-a-number/",
        "/api/v1/clusters/a%20b/topics/",
    ):
        answer = api.post(path, "{}", content_type="application/json")
        assert answer.status_code == 404 and answer["Content-Type"] == "application/json", path
        assert answer.json() == {
            "error": {
                "status": 404,
                "code": "not_found",
                "message": "Nothing is found at this address of the API.",
            }
        }
    client.force_login(personas["admin"])
    page = client.get("/clusters/no/such/page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_it_answers_a_bug_under_api_with_a_json_500_and_a_page_with_the_500_page(
    api, kafka_cluster, monkeypatch
):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(topics.TopicList, "get", broken)
    answer = api.get(_topics(kafka_cluster))
    assert answer.status_code == 500 and answer["Content-Type"] == "application/json"
    assert answer.json() == {
        "error": {
            "status": 500,
            "code": "server_error",
            "message": "The console failed to answer; the error was logged.",
        }
    }
    page = errors.server_error(RequestFactory().get(reverse("home")))
    assert page.status_code == 500 and b"Something went wrong" in page.content


def test_it_refuses_a_request_payload_member_of_the_wrong_type_with_422(api, kafka_cluster):
    url = reverse("api:requests", kwargs={"name": kafka_cluster.name})
    for kind, payload, reason in (
        ("topic.create", {"name": "team-a.x", "partitions": 1, "replication_factor": 1, "configs": "a=b"},
         "configs must be an object of names and values"),
        ("acl.create", {"binding": ["TOPIC", "x"]}, "binding must be an object of names and values"),
        ("topic.config", {"topic": "team-a.x", "changes": 5}, "list at least one config change as name, op and value"),
    ):  # fmt: skip
        answer = api.post(url, {"kind": kind, "payload": payload}, content_type="application/json")
        assert answer.status_code == 422, (kind, answer.content)
        assert reason in answer.json()["error"]["errors"]
    assert not ChangeRequest.objects.exists()


def test_it_refuses_a_plan_partition_or_broker_id_beyond_int32():
    entry = {"topic": "t", "partition": 0, "replicas": [1]}
    for bad, says in (
        ({"partition": 2**31}, "partitions[0].partition must be an integer from 0 to 2147483647."),
        ({"replicas": [1, 2**31]}, "partitions[0].replicas must be a non-empty list of broker ids (0 to 2147483647)."),
    ):  # fmt: skip
        with pytest.raises(PlanParseError) as refused:
            parse_plan(json.dumps({"version": 1, "partitions": [{**entry, **bad}]}))
        assert str(refused.value) == says
    assert parse_plan(json.dumps({"partitions": [{**entry, "partition": 2**31 - 1}]})) == {
        ("t", 2**31 - 1): (1,)
    }


def test_it_reads_nan_in_pasted_json_unless_told_not_to():
    assert str(load_json("[NaN]")) == "[nan]"  # pasted text keeps Python's reading, as before
    with pytest.raises(UploadError, match="Infinity is not a JSON number"):
        load_json("[Infinity]", allow_nan=False)
