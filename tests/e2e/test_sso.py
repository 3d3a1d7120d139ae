"""E2E: log in through a real OpenID Connect provider and a real OpenLDAP server with headless Chromium,
land with the roles the identity provider's groups map to, and lose them once the group is removed."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from console.models import Role, RoleBinding
from tests.e2e.conftest import login
from tests.sso.fixtures import (  # noqa: F401
    identity_provider,
    ldap_directory,
    oidc_provider,
    require_ldap_extra,
    slapd,
)
from tests.sso.helpers import browser_oidc_sign_in, ldap_group, use_ldap, use_oidc

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _bind(cluster, group_name: str, role: str) -> None:
    group, _ = Group.objects.get_or_create(name=group_name)
    RoleBinding.objects.create(cluster=cluster, group=group, role=role)


def _status(page, live_server, path: str) -> int:
    return page.goto(f"{live_server.url}{path}").status


def _landed(page, live_server) -> None:
    """Wait until the browser is back on a console page past the login (home may redirect on)."""
    page.wait_for_url(
        lambda url: url.startswith(live_server.url) and "/sso/" not in url and "/login/" not in url
    )


def _logout(page) -> None:
    page.click("form.logout button")


def _oidc_sign_in(page, live_server, username: str, password: str) -> None:
    browser_oidc_sign_in(page, live_server.url, username, password)


def test_oidc_login_lands_with_the_groups_roles_and_loses_them_with_the_group(
    page,
    live_server,
    settings,
    kafka_cluster,
    identity_provider,  # noqa: F811
):
    use_oidc(settings, identity_provider)
    identity_provider.allow_redirect(f"{live_server.url}/sso/oidc/callback/")
    _bind(kafka_cluster, "oidc:kafka-operators", Role.OPERATOR)

    _oidc_sign_in(page, live_server, "alice", "alice-pw-1")
    assert "alice" in page.inner_text("header")
    assert _status(page, live_server, "/c/sandbox/") == 200
    assert _status(page, live_server, "/c/sandbox/topics/") == 200
    assert _status(page, live_server, "/c/sandbox/access/") == 403  # an operator, not the cluster's admin

    identity_provider.set_groups("alice", ["kafka-viewers"])  # not bound to anything here
    assert _status(page, live_server, "/c/sandbox/") == 200  # the session still holds the old groups
    page.goto(f"{live_server.url}/")
    _logout(page)  # on to the provider's end-session endpoint, and back to the console's login page
    try:
        page.wait_for_url(lambda url: url.startswith(f"{live_server.url}/login/"))
    except Exception:
        raise AssertionError(f"logout ended at {page.url}: {page.inner_text('body')[:500]}") from None

    _oidc_sign_in(page, live_server, "alice", "alice-pw-1")
    assert _status(page, live_server, "/c/sandbox/") == 404  # no role left: the cluster is not hers to see


def test_ldap_login_lands_with_the_groups_roles_and_loses_them_with_the_group(
    page,
    live_server,
    settings,
    kafka_cluster,
    ldap_directory,  # noqa: F811
):
    require_ldap_extra()
    use_ldap(settings, ldap_directory)
    _bind(kafka_cluster, ldap_group("kafka-operators"), Role.OPERATOR)
    _bind(kafka_cluster, ldap_group("kafka-viewers"), Role.VIEWER)

    login(page, live_server, "alice", "alice-pw-1")
    _landed(page, live_server)
    assert _status(page, live_server, "/c/sandbox/") == 200
    assert _status(page, live_server, "/c/sandbox/access/") == 403

    ldap_directory.set_members("kafka-operators", [])
    _logout(page)
    page.wait_for_url(f"{live_server.url}/login/")
    login(page, live_server, "alice", "wrong-password")
    assert "didn't match" in page.inner_text("main")
    login(page, live_server, "alice", "alice-pw-1")
    _landed(page, live_server)
    assert _status(page, live_server, "/c/sandbox/") == 404

    ldap_directory.set_members("kafka-viewers", ["alice", "bob"])  # back, as a viewer only
    _logout(page)
    login(page, live_server, "alice", "alice-pw-1")
    _landed(page, live_server)
    assert _status(page, live_server, "/c/sandbox/") == 200
    assert _status(page, live_server, "/c/sandbox/topics/") == 200
