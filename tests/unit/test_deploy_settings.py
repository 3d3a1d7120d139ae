"""Issue 14 finding #9: production settings from the environment (secure cookies, HSTS, CSP,
session timeout), `check --deploy` clean with the documented environment, login throttling."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = ROOT / "docs" / "production.env"

GENERATED = {
    "SECRET_KEY": lambda: secrets.token_urlsafe(64),
    "CONSOLE_ENCRYPTION_KEY": lambda: Fernet.generate_key().decode(),
    "AUDIT_HMAC_KEY": lambda: secrets.token_urlsafe(48),
}


def documented_env() -> dict[str, str]:
    """docs/production.env with its empty secrets filled as its comments say."""
    env = {}
    for line in PRODUCTION_ENV.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip() or GENERATED[key.strip()]()
    return env


def _manage(env: dict[str, str], tmp_path, *args: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CONSOLE_", "SECURE_", "DATABASE_"))}
    for name in ("SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "AUDIT_HMAC_KEY", "DEBUG"):  # tests' own
        base.pop(name, None)
    full = {**base, "CONSOLE_VAR_DIR": str(tmp_path), **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=full, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_the_documented_production_environment(tmp_path):
    done = _manage(documented_env(), tmp_path, "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_check_deploy_complains_about_the_development_defaults(tmp_path):
    done = _manage({"DEBUG": "1"}, tmp_path, "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016", "security.W018"):
        assert warning in done.stdout + done.stderr


@pytest.mark.parametrize("every", ["0", "-5", "nan", "59"])
def test_it_refuses_an_audit_anchor_interval_that_would_never_pause(tmp_path, every):
    done = _manage({"DEBUG": "1", "CONSOLE_AUDIT_ANCHOR_EVERY_S": every}, tmp_path, "check")
    assert done.returncode != 0
    assert "CONSOLE_AUDIT_ANCHOR_EVERY_S must be at least 60" in done.stderr


def test_session_timeout_and_https_settings_come_from_the_environment(tmp_path):
    code = (
        "from django.conf import settings as s; print(s.SESSION_COOKIE_AGE, s.SESSION_COOKIE_SECURE, "
        "s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS)"
    )
    env = {**documented_env(), "CONSOLE_SESSION_TIMEOUT_S": "900"}
    done = _manage(env, tmp_path, "shell", "-v", "0", "-c", code)
    assert done.stdout.split() == ["900", "True", "True", "True", "31536000"], done.stderr


@pytest.mark.django_db
def test_every_page_carries_a_content_security_policy(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    for url in (reverse("login"), reverse("topic_list", kwargs={"name": kafka_cluster.name})):
        policy = client.get(url)["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert "'unsafe-eval'" not in policy and "script-src 'self' 'unsafe-inline'" not in policy


@pytest.mark.django_db
def test_repeated_failed_logins_lock_that_user_from_that_address(client, settings, personas):
    settings.AXES_FAILURE_LIMIT = 3
    url = reverse("login")
    for _ in range(3):
        response = client.post(url, {"username": "viewer", "password": "wrong"})
        assert response.status_code in (200, 429)
    locked = client.post(url, {"username": "viewer", "password": "pw-viewer"})
    assert locked.status_code == 429 and b"Too many failed log-ins" in locked.content
    assert "_auth_user_id" not in client.session
    # Another user from the same address still logs in.
    other = client.post(url, {"username": "operator", "password": "pw-operator"})
    assert other.status_code == 302 and client.session["_auth_user_id"] == str(personas["operator"].pk)


@pytest.mark.django_db
def test_a_success_resets_the_count(client, settings, personas):
    settings.AXES_FAILURE_LIMIT = 3
    url = reverse("login")
    for _ in range(2):
        client.post(url, {"username": "viewer", "password": "wrong"})
    assert client.post(url, {"username": "viewer", "password": "pw-viewer"}).status_code == 302
    client.logout()
    for _ in range(2):
        client.post(url, {"username": "viewer", "password": "wrong"})
    assert client.post(url, {"username": "viewer", "password": "pw-viewer"}).status_code == 302
