"""E2E: the console's cookies never clash with another Django app on the same host name. Browsers keep
cookies per host, not per port: with both apps on ``localhost`` and both using Django's ``sessionid``,
the provider's session replaced the console's during the OIDC round trip and the callback failed
("mismatching_state")."""

from __future__ import annotations

import dataclasses
from urllib.parse import urlparse

import pytest
from django.contrib.auth.models import Group

from console.models import Role, RoleBinding
from tests.sso.fixtures import identity_provider, oidc_provider  # noqa: F401
from tests.sso.helpers import browser_oidc_sign_in, use_oidc

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_cookie_names_let_oidc_login_work_with_the_provider_on_the_console_host(
    page,
    live_server,
    settings,
    kafka_cluster,
    identity_provider,  # noqa: F811
):
    host = urlparse(live_server.url).hostname
    provider = dataclasses.replace(
        identity_provider, url=f"http://{host}:{urlparse(identity_provider.url).port}"
    )
    use_oidc(settings, provider)
    provider.allow_redirect(f"{live_server.url}/sso/oidc/callback/")
    RoleBinding.objects.create(
        cluster=kafka_cluster, group=Group.objects.create(name="oidc:kafka-operators"), role=Role.OPERATOR
    )

    browser_oidc_sign_in(page, live_server.url, "alice", "alice-pw-1")

    assert "alice" in page.inner_text("header")
    assert page.goto(f"{live_server.url}/c/sandbox/topics/").status == 200
    cookies = {(c["domain"], c["name"]) for c in page.context.cookies()}
    # both apps' sessions side by side on the one host
    assert {(host, settings.SESSION_COOKIE_NAME), (host, "sessionid")} <= cookies
