"""Pointing the console at the test servers, and walking the provider's login the way a browser would."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urljoin, urlparse

import requests

from tests.sso import fixtures

LOCAL = "console.identity.backends.LocalBackend"
LDAP = "console.identity.ldap.DirectoryBackend"
OIDC = "console.identity.backends.OIDCBackend"


def use_ldap(settings, directory, **overrides) -> None:
    settings.LDAP_SERVER_URI = directory.uri
    settings.LDAP_START_TLS = False  # TLS has its own tests (test_sso_ldap.py)
    settings.LDAP_CA_CERT_FILE = ""
    settings.LDAP_BIND_DN = fixtures.BIND_DN
    settings.LDAP_BIND_PASSWORD = fixtures.BIND_PW
    settings.LDAP_USER_SEARCH_BASE = fixtures.PEOPLE
    settings.LDAP_USER_FILTER = "(uid=%(user)s)"
    settings.LDAP_GROUP_SEARCH_BASE = fixtures.GROUPS
    settings.LDAP_GROUP_TYPE = "groupOfNames"
    settings.LDAP_GROUP_FILTER = "(objectClass=groupOfNames)"
    for name, value in overrides.items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", LOCAL, LDAP, OIDC]


def use_oidc(settings, provider) -> None:
    settings.OIDC_ISSUER = provider.issuer
    settings.OIDC_DISCOVERY_URL = ""
    settings.OIDC_CLIENT_ID = provider.client_id
    settings.OIDC_CLIENT_SECRET = provider.client_secret
    settings.OIDC_GROUPS_CLAIM = "groups"


def ldap_group(name: str) -> str:
    """The console group an LDAP group becomes."""
    return "ldap:" + fixtures.group_dn(name).lower()


def bind_operators(cluster, group_name: str):
    """The identity provider's group ``group_name`` (as the console names it) is bound as operators on
    ``cluster``; returns the cluster."""
    from django.contrib.auth.models import Group

    from console.models import Role, RoleBinding

    RoleBinding.objects.create(
        cluster=cluster, group=Group.objects.create(name=group_name), role=Role.OPERATOR
    )
    return cluster


def provider_login(authorize_url: str, username: str, password: str) -> str:
    """Sign in at the provider's own login page and follow it to the console's callback; the callback
    URL the provider redirects to (not followed: the console's test client takes it from there)."""
    session = requests.Session()
    response = session.get(authorize_url, allow_redirects=True, timeout=10)
    assert "idp-username" in response.text, response.text[:500]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text).group(1)
    response = session.post(
        response.url,
        data={"csrfmiddlewaretoken": token, "username": username, "password": password,
              "next": parse_qs(urlparse(response.url).query)["next"][0]},
        headers={"Referer": response.url}, allow_redirects=False, timeout=10,
    )  # fmt: skip
    while response.status_code in (301, 302):
        location = urljoin(response.url, response.headers["Location"])
        if "/sso/oidc/callback/" in location:
            return location
        response = session.get(location, allow_redirects=False, timeout=10)
    raise AssertionError(
        f"the provider did not send the browser back: {response.status_code} {response.text[:300]}"
    )


def browser_oidc_sign_in(page, console_url: str, username: str, password: str) -> None:
    """In the browser: the console's "Sign in with OIDC", the provider's own login form when it has no
    session yet, and back to a console page past the login (home may redirect on)."""
    page.goto(f"{console_url}/login/")
    page.click("#sso-oidc")
    page.wait_for_url(lambda url: "/accounts/login/" in url or url.startswith(console_url))
    if "/accounts/login/" in page.url:
        page.fill("#idp-username", username)
        page.fill("#idp-password", password)
        page.click("#idp-submit")
    page.wait_for_url(lambda url: url.startswith(console_url) and "/sso/" not in url and "/login/" not in url)
