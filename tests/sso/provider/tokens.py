"""Access tokens of the test identity provider.

The OAuth client-credentials grant (a service such as the console authenticating to Kafka with
SASL/OAUTHBEARER) gets a JWT signed with the provider's RSA key, so Kafka's own validator and the sandbox
can check it against the JWKS (/o/.well-known/jwks.json, same ``kid``). Every other grant keeps
oauthlib's opaque random token, as before.

Claims: ``iss`` (the provider's issuer), ``sub`` (the client id, or the principal named for it in
IDP_TOKEN_SUBJECTS), ``aud`` (IDP_TOKEN_AUDIENCE, default "kafka"), ``iat``, ``exp`` (now + the grant's
lifetime, IDP_TOKEN_LIFETIME seconds when set), ``scope`` (space-separated), ``client_id`` and a
unique ``jti``.
"""

from __future__ import annotations

import json
import os
import time

from jwcrypto import jwk, jws
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import generate_token


def subjects() -> dict[str, str]:
    """IDP_TOKEN_SUBJECTS: "client=principal,client2=principal2" (default: sub = client id)."""
    pairs = (p.split("=", 1) for p in os.environ.get("IDP_TOKEN_SUBJECTS", "").split(",") if "=" in p)
    return {k.strip(): v.strip() for k, v in pairs}


def access_token(request, refresh_token: bool = False) -> str:
    """ACCESS_TOKEN_GENERATOR: a signed JWT for client credentials, a random token otherwise."""
    if refresh_token or getattr(request, "grant_type", None) != "client_credentials":
        return generate_token()
    client_id = request.client.client_id
    now = int(time.time())
    lifetime = int(os.environ.get("IDP_TOKEN_LIFETIME") or request.expires_in)
    claims = {
        "iss": oauth2_settings.oidc_issuer(request),
        "sub": subjects().get(client_id, client_id),
        "aud": os.environ.get("IDP_TOKEN_AUDIENCE", "kafka"),
        "iat": now,
        "nbf": now,
        "exp": now + lifetime,
        "scope": " ".join(request.scopes or ()),
        "client_id": client_id,
        "jti": generate_token(),  # every token differs (the provider keys stored tokens by checksum)
    }
    key = jwk.JWK.from_pem(oauth2_settings.OIDC_RSA_PRIVATE_KEY.encode())
    token = jws.JWS(json.dumps(claims, separators=(",", ":")).encode())
    token.add_signature(key, alg="RS256", protected={"alg": "RS256", "typ": "JWT", "kid": key.thumbprint()})
    return token.serialize(compact=True)
