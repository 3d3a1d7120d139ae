"""The test identity provider's client-credentials grant: a JWT that a resource server (Kafka's own
OAUTHBEARER validator, the sandbox) can verify against the provider's JWKS."""

from __future__ import annotations

import time

import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from tests.sso.fixtures import oidc_provider  # noqa: F401 - fixture


def test_it_signs_client_credentials_tokens_with_the_key_in_its_jwks(oidc_provider):  # noqa: F811
    before = int(time.time())
    answer = oidc_provider.client_credentials_token(scope="openid")
    keys = KeySet.import_key_set(requests.get(oidc_provider.jwks_url, timeout=5).json())
    token = jwt.decode(answer["access_token"], keys, algorithms=["RS256"])
    claims = token.claims
    assert token.header["kid"] == keys.keys[0].kid
    assert {k: claims[k] for k in ("iss", "sub", "aud", "scope", "client_id")} == {
        "iss": oidc_provider.issuer,
        "sub": "kafka-console",
        "aud": "kafka",
        "scope": "openid",
        "client_id": "kafka-console",
    }
    assert before <= claims["iat"] <= int(time.time())
    assert claims["exp"] - claims["iat"] == answer["expires_in"]


def test_it_refuses_the_service_client_with_a_wrong_secret(oidc_provider):  # noqa: F811
    answer = requests.post(
        oidc_provider.token_endpoint,
        data={"grant_type": "client_credentials"},
        auth=(oidc_provider.service_client_id, "wrong"),
        timeout=10,
    )
    assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client")


def test_it_gives_each_request_its_own_token_even_within_one_second(oidc_provider):  # noqa: F811
    # Kafka clients connecting at once ask together; the provider stores every token under a unique
    # checksum, so two equal JWTs would fail the second request.
    tokens = [oidc_provider.client_credentials_token()["access_token"] for _ in range(3)]
    assert len(set(tokens)) == 3
