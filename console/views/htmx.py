"""How the pages answer htmx, in one place, over django-htmx (its middleware sets ``request.htmx``).

- A URL that serves a page and a part of it answers with ``fragment_or_page``: the fragment for an htmx
  request, the whole page otherwise (also for a boosted request, which swaps in the whole body). Both carry
  ``Vary: HX-Request``, so neither a cache nor the browser's history (``hx-push-url``) hands one for the other.
- A fragment that htmx polls answers with ``polled_fragment``: once the work is finished, an htmx poll gets
  django-htmx's ``HttpResponseStopPolling`` (286), which htmx still swaps in and then stops polling.
- A form that succeeded answers with ``redirect_to``: ``HX-Redirect`` for htmx (a 302 would be followed by the
  XHR and its page swapped into the form), a 302 otherwise.

Views never set 286, ``Vary`` or ``HX-*`` headers themselves, nor read ``request.htmx``
(tests/unit/test_htmx.py checks it).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

__all__ = ["fragment_or_page", "polled_fragment", "redirect_to", "wants_fragment"]

VARY = ("HX-Request",)


def wants_fragment(request: HttpRequest) -> bool:
    """True when htmx asks to swap in part of a page (not a boosted request, which wants the whole page)."""
    return bool(request.htmx) and not request.htmx.boosted


def fragment_or_page(
    request: HttpRequest, page: str, fragment: str | None, context: dict, *, status: int = 200
) -> HttpResponse:
    """The fragment template for htmx, the page template otherwise (always the page when fragment is None),
    with ``Vary: HX-Request``."""
    template = fragment if fragment and wants_fragment(request) else page
    response = render(request, template, context, status=status)
    patch_vary_headers(response, VARY)
    return response


def polled_fragment(
    request: HttpRequest, template: str, context: dict, *, finished: bool, processors: bool = True
) -> HttpResponse:
    """A fragment htmx polls: 286 (stop polling) to an htmx poll once finished, 200 otherwise.

    ``Vary: HX-Request`` because the status depends on it. ``processors=False`` renders without the context
    processors (for a fragment every open tab polls each second; the context then carries what it needs).
    """
    html = render_to_string(template, context, request=request if processors else None)
    response = HttpResponseStopPolling(html) if finished and request.htmx else HttpResponse(html)
    patch_vary_headers(response, VARY)
    return response


def redirect_to(request: HttpRequest, url: str) -> HttpResponse:
    """After a form succeeded: ``HX-Redirect`` (status 200) for htmx, a 302 otherwise."""
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
