"""The console's cookies carry names of their own, so another Django app on the same host name (an
identity provider, another tool) never overwrites them (tests/e2e/test_cookie_names.py: OIDC login
with the provider on the console's host)."""

from __future__ import annotations

from django.conf import global_settings, settings


def test_cookie_names_differ_from_djangos_defaults():
    names = {
        "SESSION_COOKIE_NAME": settings.SESSION_COOKIE_NAME,
        "CSRF_COOKIE_NAME": settings.CSRF_COOKIE_NAME,
        "LANGUAGE_COOKIE_NAME": settings.LANGUAGE_COOKIE_NAME,
    }
    assert names == {
        "SESSION_COOKIE_NAME": "kconsole_sessionid",
        "CSRF_COOKIE_NAME": "kconsole_csrftoken",
        "LANGUAGE_COOKIE_NAME": "kconsole_language",
    }
    assert not set(names.values()) & {getattr(global_settings, n) for n in names}


def test_cookie_names_are_what_a_signed_in_browser_holds(client, personas):
    client.force_login(personas["viewer"])
    client.get("/login/")
    assert {settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME} <= set(client.cookies)
    assert not {"sessionid", "csrftoken"} & set(client.cookies)
