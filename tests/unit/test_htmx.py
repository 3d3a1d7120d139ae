"""The web layer answers htmx one way (console/views/htmx.py, over django-htmx): a fragment or the page with
``Vary: HX-Request``, a poll stopped with 286 once the work is finished, a redirect htmx follows.

The last test reads console/views/: no view sets 286, a Vary header or an htmx redirect by hand, and none
looks at ``request.htmx`` itself, so a sixth way cannot come back unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import RequestFactory, override_settings
from django_htmx.http import HttpResponseStopPolling
from django_htmx.middleware import HtmxDetails

from console.views import htmx

VIEWS = Path(__file__).resolve().parents[2] / "console" / "views"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "OPTIONS": {
            "context_processors": ["django.template.context_processors.request"],
            "loaders": [
                (
                    "django.template.loaders.locmem.Loader",
                    {
                        "page.html": "PAGE {{ x }}",
                        "_fragment.html": "FRAGMENT {{ x }}",
                        "_poll.html": "POLL {{ x }} at [{{ request.path }}]",
                    },
                )
            ],
        },
    }
]


@pytest.fixture(autouse=True)
def _templates():
    with override_settings(TEMPLATES=TEMPLATES):
        yield


def _request(method: str = "get", *, htmx_request: bool = False, boosted: bool = False):
    headers = {"HX-Request": "true"} if htmx_request else {}
    if boosted:
        headers["HX-Boosted"] = "true"
    request = getattr(RequestFactory(), method)("/somewhere", headers=headers)
    request.htmx = HtmxDetails(request)  # what django_htmx.middleware.HtmxMiddleware sets
    return request


def test_it_gives_an_htmx_request_the_fragment_and_varies_on_hx_request():
    response = htmx.fragment_or_page(_request(htmx_request=True), "page.html", "_fragment.html", {"x": 1})
    assert (response.status_code, response.content, response["Vary"]) == (200, b"FRAGMENT 1", "HX-Request")


def test_it_gives_a_plain_request_the_page_with_the_same_vary():
    response = htmx.fragment_or_page(_request(), "page.html", "_fragment.html", {"x": 1})
    assert (response.status_code, response.content, response["Vary"]) == (200, b"PAGE 1", "HX-Request")


def test_it_gives_a_boosted_request_the_whole_page():
    response = htmx.fragment_or_page(
        _request(htmx_request=True, boosted=True), "page.html", "_fragment.html", {"x": 1}
    )
    assert (response.status_code, response.content, response["Vary"]) == (200, b"PAGE 1", "HX-Request")


def test_it_gives_the_page_to_htmx_when_there_is_no_fragment_and_keeps_the_status():
    response = htmx.fragment_or_page(
        _request("post", htmx_request=True), "page.html", None, {"x": 2}, status=404
    )
    assert (response.status_code, response.content, response["Vary"]) == (404, b"PAGE 2", "HX-Request")


def test_it_answers_a_finished_htmx_poll_with_stop_polling_and_the_fragment():
    response = htmx.polled_fragment(_request(htmx_request=True), "_poll.html", {"x": 3}, finished=True)
    assert isinstance(response, HttpResponseStopPolling)
    assert (response.status_code, response.content, response["Vary"]) == (
        286,
        b"POLL 3 at [/somewhere]",
        "HX-Request",
    )


def test_it_keeps_an_htmx_poll_going_while_the_work_runs():
    response = htmx.polled_fragment(_request(htmx_request=True), "_poll.html", {"x": 4}, finished=False)
    assert (response.status_code, response.content, response["Vary"]) == (
        200,
        b"POLL 4 at [/somewhere]",
        "HX-Request",
    )


def test_it_answers_a_plain_request_for_a_finished_fragment_with_200():
    response = htmx.polled_fragment(_request(), "_poll.html", {"x": 5}, finished=True)
    assert (response.status_code, response.content, response["Vary"]) == (
        200,
        b"POLL 5 at [/somewhere]",
        "HX-Request",
    )


def test_it_renders_a_polled_fragment_without_context_processors_when_asked():
    response = htmx.polled_fragment(
        _request(htmx_request=True), "_poll.html", {"x": 6}, finished=True, processors=False
    )
    assert (response.status_code, response.content) == (286, b"POLL 6 at []")


def test_it_redirects_htmx_with_hx_redirect_and_a_plain_request_with_302():
    to_htmx = htmx.redirect_to(_request("post", htmx_request=True), "/next/")
    plain = htmx.redirect_to(_request("post"), "/next/")
    assert (to_htmx.status_code, to_htmx["HX-Redirect"], to_htmx.has_header("Location")) == (
        200,
        "/next/",
        False,
    )
    assert (plain.status_code, plain["Location"], plain.has_header("HX-Redirect")) == (302, "/next/", False)


# What only console/views/htmx.py may write: each pattern is one of the ways views answered htmx by hand.
BY_HAND = {
    "a 286 status": re.compile(r"\b286\b"),
    "a Vary header": re.compile(r"patch_vary_headers|vary_on_headers|[\"']Vary[\"']"),
    "django-htmx's responses": re.compile(r"django_htmx|HttpResponseClientRedirect|HttpResponseStopPolling"),
    "its own reading of request.htmx": re.compile(r"request\.htmx\b"),
    "a fragment rendered without Vary": re.compile(r"\brender\(request, \"console/_"),
}


def test_it_finds_no_view_answering_htmx_by_hand():
    found = [
        f"{path.name}:{n}: {what}: {line.strip()}"
        for path in sorted(VIEWS.glob("*.py"))
        if path.name != "htmx.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for what, pattern in BY_HAND.items()
        if pattern.search(line)
    ]
    assert found == []
