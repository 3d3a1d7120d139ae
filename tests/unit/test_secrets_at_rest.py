"""Issue 14 findings #5 and #6: address lists are checked host:port lists in one canonical form on
every save path, and secrets at rest use CONSOLE_ENCRYPTION_KEY (a MultiFernet key list), not
SECRET_KEY, with rotation and a clear page when a stored secret is unreadable."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from console import crypto
from console.models import AuditEvent, Cluster

pytestmark = pytest.mark.django_db

KEY_OLD, KEY_NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


@pytest.fixture
def keys(settings):
    def use(*keys: str) -> None:
        settings.CONSOLE_ENCRYPTION_KEYS = list(keys)

    return use


# ------------------------------------------------------------------ #5 address lists


def _settings_post(cluster, servers: str) -> dict:
    return {
        "name": cluster.name,
        "bootstrap_servers": servers,
        "security_protocol": "PLAINTEXT",
        "request_timeout_s": "5",
    }


def test_newline_separated_servers_are_stored_canonical_and_pages_work(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    first, *rest = kafka_cluster.bootstrap_servers.split(",")
    typed = "\n".join([first, *rest, first]) + "\r\n"
    url = reverse("cluster_settings", kwargs={"name": kafka_cluster.name})
    response = client.post(url, _settings_post(kafka_cluster, typed))
    assert response.status_code == 302, response.content[:800]
    kafka_cluster.refresh_from_db()
    assert "\n" not in kafka_cluster.bootstrap_servers and "\r" not in kafka_cluster.bootstrap_servers
    assert kafka_cluster.bootstrap_servers == ",".join([first, *rest, first])
    for route in ("cluster_overview", "topic_list"):
        page = client.get(reverse(route, kwargs={"name": kafka_cluster.name}))
        assert page.status_code == 200, route


def test_a_row_saved_with_newlines_by_an_older_version_still_connects(client, personas, kafka_cluster):
    # The row as the previous code stored it (the form accepted newlines and kept them).
    Cluster.objects.filter(pk=kafka_cluster.pk).update(
        bootstrap_servers=kafka_cluster.bootstrap_servers.replace(",", "\n") + "\n"
    )
    client.force_login(personas["viewer"])
    page = client.get(reverse("topic_list", kwargs={"name": kafka_cluster.name}))
    assert page.status_code == 200


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("::1:9092", "IPv6 address in brackets"),
        ("b1:9092\nb2", "'b2' is not host:port"),
        ("b1:9092\x00", "port '9092\x00'"),
        ("b1:9092;b2:9092", "'b1:9092;b2' in"),
    ],
)
def test_every_save_path_checks_the_list(db, value, fragment):
    cluster = Cluster(name="x", bootstrap_servers=value)
    with pytest.raises(ValidationError) as err:
        cluster.full_clean()
    assert fragment in " ".join(err.value.messages)
    with pytest.raises(CommandError) as cmd:
        call_command("register_cluster", "--name", "y", "--bootstrap-servers", value, "--as", "nobody")
    assert "Bootstrap servers" in str(cmd.value)
    assert not Cluster.objects.exists()


def test_ipv6_in_brackets_is_accepted(db):
    cluster = Cluster(name="v6", bootstrap_controllers=" [::1]:9093,\n[fe80::1]:9094 ")
    cluster.full_clean()
    assert cluster.bootstrap_controllers == "[::1]:9093,[fe80::1]:9094"


# ------------------------------------------------------------------ #6 encryption keys


def test_changing_secret_key_does_not_lose_stored_passwords(settings, keys):
    keys(KEY_NEW)
    cluster = Cluster(name="sasl")
    cluster.set_sasl_password("s3cret")
    settings.SECRET_KEY = "a-completely-different-secret-key-" + "x" * 30
    assert cluster.sasl_password() == "s3cret"


def test_the_key_comes_from_the_environment_not_the_secret_key(settings, keys):
    keys(KEY_NEW)
    token = crypto.encrypt("pw")
    assert Fernet(KEY_NEW.encode()).decrypt(token.encode()) == b"pw"


def test_rotation_re_encrypts_under_the_first_key_and_is_audited(kafka_cluster, keys):
    keys(KEY_OLD)
    kafka_cluster.set_sasl_password("rotate-me")
    kafka_cluster.save()
    keys(KEY_NEW, KEY_OLD)  # the new key first, the old one still decrypts
    assert not crypto.current(Cluster.objects.get().sasl_password_encrypted)
    call_command("rotate_secrets")
    keys(KEY_NEW)  # the old key removed
    stored = Cluster.objects.get()
    assert crypto.current(stored.sasl_password_encrypted)
    assert stored.sasl_password() == "rotate-me"
    event = AuditEvent.objects.filter(action="secrets.rotate").get()
    assert event.targets == ["console.Cluster.sasl_password_encrypted"]
    assert "rotate-me" not in str(event.params)


def test_rotation_names_secrets_no_key_opens(kafka_cluster, keys):
    keys(KEY_OLD)
    kafka_cluster.set_sasl_password("lost")
    kafka_cluster.save()
    keys(KEY_NEW)
    with pytest.raises(CommandError, match="sandbox"):
        call_command("rotate_secrets")


def test_an_unreadable_secret_gives_a_page_that_says_what_to_do(client, personas, kafka_cluster, keys):
    keys(KEY_OLD)
    Cluster.objects.filter(pk=kafka_cluster.pk).update(
        security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN", sasl_username="u"
    )
    kafka_cluster.refresh_from_db()
    kafka_cluster.set_sasl_password("pw")
    kafka_cluster.save()
    keys(KEY_NEW)
    client.force_login(personas["viewer"])
    page = client.get(reverse("topic_list", kwargs={"name": kafka_cluster.name}))
    assert page.status_code == 503
    assert b"CONSOLE_ENCRYPTION_KEY" in page.content and b"rotate_secrets" in page.content
    # Its admin can still open the settings and is asked for the password when testing.
    client.force_login(personas["admin"])
    url = reverse("cluster_settings", kwargs={"name": kafka_cluster.name})
    assert client.get(url).status_code == 200
    data = {
        **_settings_post(kafka_cluster, kafka_cluster.bootstrap_servers),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_username": "u",
        "action": "test",
    }
    answer = client.post(url, data)
    assert answer.status_code == 200
    assert b"cannot be decrypted" in answer.content


def test_one_unreadable_cluster_does_not_stop_background_work_for_the_others(
    kafka_cluster, keys, tmp_path, monkeypatch
):
    from console.reassignment import janitor
    from console.telemetry import snapshots

    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    keys(KEY_OLD)
    broken = Cluster(
        name="a-broken", bootstrap_servers="127.0.0.1:1", security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN", sasl_username="u",
    )  # fmt: skip
    broken.set_sasl_password("pw")
    broken.save()
    keys(KEY_NEW)
    out = snapshots.collect_all_snapshots()
    assert "CONSOLE_ENCRYPTION_KEY" in out["a-broken"]
    assert not isinstance(out[kafka_cluster.name], str)  # the sandbox was still collected
    janitor.sweep_throttles()  # does not raise either
