"""A webhook channel created through the API the way a retrying client does: an admin's write token and an
idempotency key, the same POST sendable again (the notification API and secret-rotation tests)."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from console.identity import tokens


@dataclass(frozen=True)
class WebhookPost:
    """One POST creating a webhook channel on the sandbox cluster; ``send()`` makes it (again)."""

    client: object
    url: str
    body: dict
    headers: dict

    def send(self):
        return self.client.post(self.url, self.body, content_type="application/json", **self.headers)


def webhook_post(client, admin, name: str, hook_url: str, idempotency_key: str) -> WebhookPost:
    bearer = tokens.create_token(actor=admin, name="t", scope="write", days=1).secret
    return WebhookPost(
        client=client,
        url=reverse("api:notifications", kwargs={"name": "sandbox"}),
        body={"name": name, "kind": "webhook", "url": hook_url, "events": []},
        headers={"HTTP_AUTHORIZATION": f"Bearer {bearer}", "HTTP_IDEMPOTENCY_KEY": idempotency_key},
    )
