"""E2E: an operator sets a user's quota on the client quotas page - the diff previewed first, then applied -
finds it in the list, and looks up the quota that applies to that user and a client id."""

from __future__ import annotations

import uuid

import pytest

from console.clusters.actions import gateway_for
from console.kafka.quotas import QuotaAlteration
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def quota_user(kafka_cluster):
    """A user name of this test only; its quotas are removed afterwards."""
    name = f"e2e-q-{uuid.uuid4().hex[:8]}"
    yield name
    gw = gateway_for(kafka_cluster)
    left = [e for e in gw.describe_client_quotas() if e.entity == (("user", name),)]
    if left:
        gw.alter_client_quotas([QuotaAlteration(e.entity, dict.fromkeys(e.values)) for e in left])


def test_an_operator_previews_applies_and_looks_up_a_quota(page, live_server, sandbox, personas, quota_user):
    entity = f"user={quota_user}"
    login(page, live_server, "operator", "pw-operator")
    page.goto(f"{live_server.url}/c/sandbox/quotas/")
    page.fill("#id_entity", entity)
    page.fill("#id_producer_byte_rate", "1048576")
    page.click("#quota-alter button[value=preview]")
    diff = page.locator("#quota-diff")
    diff.wait_for()
    row = diff.locator("tbody tr")
    assert row.count() == 1
    cells = [c.strip() for c in row.first.locator("td").all_inner_texts()]
    assert cells[:3] == [entity, "producer_byte_rate", "set"]
    assert "1048576" in cells[4]
    assert not _quotas_of(quota_user)  # a preview changes nothing

    page.click("#quota-alter button[value=apply]")
    page.wait_for_url(f"{live_server.url}/c/sandbox/quotas/?entity_type=user")
    listed = page.locator(f'#quota-list tr[data-entity="{entity}"]')
    assert "producer_byte_rate = 1048576" in " ".join(listed.inner_text().split())
    assert _quotas_of(quota_user) == {"producer_byte_rate": 1048576.0}

    page.fill("#id_user", quota_user)
    page.fill("#id_client_id", "e2e-app")
    page.click("#quota-effective-form button[type=submit]")
    applies = page.locator('#quota-effective-result tr[data-key="producer_byte_rate"]')
    applies.wait_for()
    cells = [c.strip() for c in applies.locator("td").all_inner_texts()]
    assert "1048576" in cells[1] and cells[2] == entity
    other = page.locator('#quota-effective-result tr[data-key="consumer_byte_rate"]')
    assert "unlimited" in other.inner_text()


def _cluster():
    from console.models import Cluster

    return Cluster.objects.get(name="sandbox")


def _quotas_of(user: str) -> dict:
    found = [e for e in gateway_for(_cluster()).describe_client_quotas() if e.entity == (("user", user),)]
    return dict(found[0].values) if found else {}
