"""Issue 33 item 6: behind the documented TLS proxy (CONSOLE_BEHIND_PROXY=1), login throttling keys on
the client's address from X-Forwarded-For (django-axes through django-ipware), not on the proxy's, and a
client cannot choose its address by sending its own X-Forwarded-For."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from tests.unit.test_deploy_settings import _manage

PROBE = """
import json
from axes.helpers import get_client_ip_address
from django.conf import settings
from django.test import RequestFactory
rf = RequestFactory()
seen = {
    name: get_client_ip_address(rf.get("/", REMOTE_ADDR="10.0.0.1", **meta))
    for name, meta in {
        "through_proxy": {"HTTP_X_FORWARDED_FOR": "198.51.100.7"},
        "spoofed": {"HTTP_X_FORWARDED_FOR": "192.0.2.99, 198.51.100.7"},
        "direct": {},
    }.items()
}
names = [n for n in dir(settings) if n.startswith("AXES_IPWARE_")]
print(json.dumps({"seen": seen, "settings": {n: getattr(settings, n) for n in names}}))
"""


def _probe(tmp_path, **env) -> dict:
    done = _manage({"DEBUG": "1", **env}, tmp_path, "shell", "-c", PROBE)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_behind_the_proxy_the_client_address_is_the_one_the_proxy_added(tmp_path):
    seen = _probe(tmp_path, CONSOLE_BEHIND_PROXY="1")["seen"]
    # the client's own header is not believed: a spoofed chain counts against the proxy's address
    assert seen == {"through_proxy": "198.51.100.7", "spoofed": "10.0.0.1", "direct": "10.0.0.1"}


def test_without_the_proxy_setting_x_forwarded_for_is_ignored(tmp_path):
    seen = _probe(tmp_path, CONSOLE_BEHIND_PROXY="0")["seen"]
    assert seen == {"through_proxy": "10.0.0.1", "spoofed": "10.0.0.1", "direct": "10.0.0.1"}


@pytest.mark.django_db
def test_it_locks_a_named_user_out_only_from_the_attackers_address_behind_the_proxy(
    tmp_path, settings, personas
):
    for name, value in _probe(tmp_path, CONSOLE_BEHIND_PROXY="1")["settings"].items():
        setattr(settings, name, tuple(value) if isinstance(value, list) else value)
    url = reverse("login")
    attacker = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.66")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        attacker.post(url, {"username": "viewer", "password": "wrong"})
    assert attacker.post(url, {"username": "viewer", "password": "pw-viewer"}).status_code == 429
    viewer = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")  # same proxy
    answer = viewer.post(url, {"username": "viewer", "password": "pw-viewer"})
    assert answer.status_code == 302 and viewer.session["_auth_user_id"] == str(personas["viewer"].pk)


@pytest.mark.django_db
def test_behind_the_proxy_the_audit_trail_names_the_client_not_the_proxy(
    tmp_path, settings, personas, kafka_cluster
):
    """A login and a change made through a page are audited with the address the lock-out and the API
    use (the client's, as the proxy reports it), never the proxy's."""
    import uuid

    from console.models import AuditEvent

    for name, value in _probe(tmp_path, CONSOLE_BEHIND_PROXY="1")["settings"].items():
        setattr(settings, name, tuple(value) if isinstance(value, list) else value)
    operator = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")
    answer = operator.post(reverse("login"), {"username": "operator", "password": "pw-operator"})
    assert answer.status_code == 302
    topic = f"proxy.{uuid.uuid4().hex[:8]}"
    url = reverse("topic_create", kwargs={"name": kafka_cluster.name})
    operator.post(url, {"name": topic, "partitions": "1", "replication_factor": "1", "action": "create"})
    login = AuditEvent.objects.filter(action="auth.login").latest("id")
    created = [
        e
        for e in AuditEvent.objects.filter(action="topic.create").order_by("id")
        if f"topic:{topic}" in e.targets
    ]
    assert login.source_ip == "198.51.100.7"
    assert [(e.outcome, e.source_ip) for e in created] == [
        ("requested", "198.51.100.7"),
        ("success", "198.51.100.7"),
    ]
