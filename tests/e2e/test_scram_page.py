"""E2E: an admin creates a SCRAM user on its page (the password typed twice and never rendered back),
rotates the credential and deletes it after typing the user name to confirm; the sandbox's SASL store
takes each step at once."""

from __future__ import annotations

import uuid

import pytest
import scramp

from console.clusters.actions import gateway_for
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def scram_user(kafka_cluster):
    """A user name of this test only; its credentials are deleted afterwards."""
    name = f"e2e-scram-{uuid.uuid4().hex[:8]}"
    yield name
    gw = gateway_for(kafka_cluster)
    found = gw.describe_scram_user(name)
    for mechanism in found.mechanisms if found is not None else ():
        gw.delete_scram_credential(name, mechanism)


def logs_in(sandbox, user: str, mechanism: str, password: str) -> bool:
    """A SCRAM exchange against the credential the sandbox's SASL listener checks."""
    credential = sandbox.state.scram_credentials.get(mechanism, user)
    if credential is None:
        return False
    server = scramp.ScramMechanism(mechanism).make_server(lambda _: credential)
    client = scramp.ScramClient([mechanism], user, password)
    try:
        server.set_client_first(client.get_client_first())
        client.set_server_first(server.get_server_first())
        server.set_client_final(client.get_client_final())
        client.set_server_final(server.get_server_final())
    except scramp.ScramException:
        return False
    return True


def set_credential(page, iterations: str, password: str, again: str) -> None:
    page.select_option("#id_mechanism", "SCRAM-SHA-512")
    page.fill("#id_iterations", iterations)
    page.fill("#id_password", password)
    page.fill("#id_password_again", again)
    page.click("#scram-apply")


def test_an_admin_creates_rotates_and_deletes_a_scram_user(page, live_server, sandbox, personas, scram_user):
    first, second = f"Pw-{uuid.uuid4().hex}", f"Pw-{uuid.uuid4().hex}"
    url = f"{live_server.url}/c/sandbox/scram-users/"
    login(page, live_server, "admin", "pw-admin")
    page.goto(url)
    page.fill("#id_user", scram_user)
    set_credential(page, "8192", first, first + "!")  # the two differ: refused, nothing rendered back
    assert "The two passwords differ." in page.inner_text("#scram-set")
    assert first not in page.content() and page.input_value("#id_password") == ""
    assert gateway_for(_cluster()).describe_scram_user(scram_user) is None

    set_credential(page, "8192", first, first)
    page.wait_for_url(url)
    row = page.locator(f'#scram-users tr[data-user="{scram_user}"][data-mechanism="SCRAM-SHA-512"]')
    assert "8192" in row.inner_text().replace(",", "")
    assert first not in page.content()
    assert logs_in(sandbox, scram_user, "SCRAM-SHA-512", first)

    row.locator("text=rotate").click()  # the form with the user filled in
    assert page.input_value("#id_user") == scram_user
    set_credential(page, "4096", second, second)
    page.wait_for_url(lambda at: at.split("#")[0] == url)  # the browser keeps the form's #scram-set
    row = page.locator(f'#scram-users tr[data-user="{scram_user}"][data-mechanism="SCRAM-SHA-512"]')
    assert "4096" in row.inner_text().replace(",", "")
    assert second not in page.content() and first not in page.content()
    assert logs_in(sandbox, scram_user, "SCRAM-SHA-512", second)
    assert not logs_in(sandbox, scram_user, "SCRAM-SHA-512", first)

    row.locator("text=delete").click()
    page.locator("#scram-delete").wait_for()
    page.fill("#id_confirmation", "not-the-user")
    page.click("#scram-delete-button")
    assert "Type the user name exactly" in page.inner_text("#scram-delete")
    assert logs_in(sandbox, scram_user, "SCRAM-SHA-512", second)  # nothing deleted
    page.fill("#id_confirmation", scram_user)
    page.click("#scram-delete-button")
    page.wait_for_url(url)
    assert page.locator(f'#scram-users tr[data-user="{scram_user}"]').count() == 0
    assert not logs_in(sandbox, scram_user, "SCRAM-SHA-512", second)
    assert gateway_for(_cluster()).describe_scram_user(scram_user) is None


def _cluster():
    from console.models import Cluster

    return Cluster.objects.get(name="sandbox")
