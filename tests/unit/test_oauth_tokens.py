"""OAUTHBEARER tokens: the client-credentials fetch from a real local token endpoint, its cache and
refresh timing on a controlled clock, and error texts that name the cause and never a secret."""

from __future__ import annotations

import base64
import json
import logging
import socket
import threading
import time
from urllib.parse import parse_qs

import pytest

from console.kafka import KafkaOperationError, OAuthSettings
from console.kafka.oauth import TokenSource, confluent_oauth_cb, refresh_at
from tests.local_http import LocalServer, QuietHandler

SECRET = "s3cret-client-value"


def jwt(claims: dict) -> str:
    def enc(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    return f"{enc({'alg': 'none'})}.{enc(claims)}.c2ln"


class TokenEndpoint(LocalServer):
    """A token endpoint on 127.0.0.1: answers what ``answer(request)`` returns; records requests."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.answer = lambda req: (
            200,
            {"access_token": jwt({"sub": "svc", "exp": 1000}), "token_type": "Bearer"},
        )
        self.delay = 0.0
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                req = {"path": self.path, "auth": self.headers.get("Authorization"), "form": parse_qs(body)}
                outer.requests.append(req)
                time.sleep(outer.delay)
                self.reply(*outer.answer(req))

        super().__init__(Handler)
        self.url = f"{self.base}/realms/k/token"
        self.start()


@pytest.fixture
def endpoint():
    ep = TokenEndpoint()
    yield ep
    ep.close()


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def settings(url: str, **kw) -> OAuthSettings:
    return OAuthSettings(token_endpoint=url, client_id="console", client_secret=SECRET, scope="kafka", **kw)


def test_it_posts_the_client_credentials_grant_with_basic_auth_and_reads_sub_and_exp(endpoint):
    endpoint.answer = lambda req: (
        200,
        {"access_token": jwt({"sub": "service-account-console", "exp": 1600}), "expires_in": 5},
    )
    source = TokenSource(settings(endpoint.url), clock=Clock(1000.0))
    token = source.token()
    assert (token.principal, token.issued_at, token.expires_at) == ("service-account-console", 1000.0, 1600.0)
    basic = base64.b64encode(f"console:{SECRET}".encode()).decode()
    assert endpoint.requests == [
        {
            "path": "/realms/k/token",
            "auth": f"Basic {basic}",
            "form": {"grant_type": ["client_credentials"], "scope": ["kafka"]},
        }
    ]
    assert SECRET not in repr(token) and token.value not in repr(token)


def test_it_uses_expires_in_and_the_client_id_for_an_opaque_token(endpoint):
    endpoint.answer = lambda req: (200, {"access_token": "opaque-token", "expires_in": 300})
    token = TokenSource(settings(endpoint.url), clock=Clock(50.0)).token()
    assert (token.value, token.expires_at, token.principal) == ("opaque-token", 350.0, "console")


@pytest.mark.parametrize(
    ("lifetime", "due"),
    [(3600, 2880.0), (120, 90.0), (100, 70.0), (20, 0.0)],  # 80%, but never later than 30 s before expiry
)
def test_it_refreshes_at_80_percent_and_no_later_than_30_s_before_expiry(endpoint, lifetime, due):
    clock = Clock(0.0)
    endpoint.answer = lambda req: (200, {"access_token": jwt({"sub": "s", "exp": clock.now + lifetime})})
    source = TokenSource(settings(endpoint.url), clock=clock)
    first = source.token()
    assert refresh_at(first) == due
    clock.now = due - 0.5
    if due > 0:
        assert source.token() is first and len(endpoint.requests) == 1
    clock.now = due
    second = source.token()
    assert second is not first and len(endpoint.requests) == 2
    assert second.expires_at == due + lifetime


def test_it_fetches_once_when_many_threads_need_a_token_at_once(endpoint):
    endpoint.delay = 0.3
    source = TokenSource(settings(endpoint.url), clock=Clock(0.0))
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(source.token().value)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(endpoint.requests) == 1 and len(set(got)) == 1 and len(got) == 8


def test_it_keeps_the_valid_token_while_a_refresh_fails_then_says_why(endpoint, caplog):
    clock = Clock(0.0)
    endpoint.answer = lambda req: (200, {"access_token": jwt({"sub": "s", "exp": 100})})
    source = TokenSource(settings(endpoint.url), clock=clock)
    first = source.token()
    endpoint.answer = lambda req: (
        401,
        {"error": "invalid_client", "error_description": "Invalid client credentials"},
    )
    clock.now = 80.0
    with caplog.at_level(logging.DEBUG):
        assert source.token() is first  # due, refresh refused, still valid
    clock.now = 100.0
    with pytest.raises(KafkaOperationError) as exc:
        source.token()
    assert (exc.value.name, exc.value.message) == (
        "TOKEN_ENDPOINT_REFUSED",
        "token endpoint refused the client (401 invalid_client): Invalid client credentials",
    )
    assert SECRET not in caplog.text and first.value not in caplog.text


def test_it_says_the_token_endpoint_is_unreachable(caplog):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens
    url = f"http://127.0.0.1:{port}/token"
    with caplog.at_level(logging.DEBUG), pytest.raises(KafkaOperationError) as exc:
        TokenSource(settings(url)).token(timeout_s=2)
    assert exc.value.name == "TOKEN_ENDPOINT_UNREACHABLE" and exc.value.retriable
    assert exc.value.message.startswith(f"token endpoint unreachable: {url}: ")
    assert "Connection refused" in exc.value.message
    assert SECRET not in exc.value.message and SECRET not in caplog.text


def test_it_gives_up_on_a_silent_token_endpoint_within_the_timeout(endpoint):
    endpoint.delay = 3.0
    start = time.monotonic()
    with pytest.raises(KafkaOperationError) as exc:
        TokenSource(settings(endpoint.url)).token(timeout_s=0.5)
    assert time.monotonic() - start < 2.0
    assert exc.value.message == f"token endpoint unreachable: {endpoint.url}: no answer within 0.5 s"


@pytest.mark.parametrize(
    ("answer", "name", "message"),
    [
        ((200, {"token_type": "Bearer"}), "TOKEN_ENDPOINT_BAD_ANSWER", "answer has no access_token"),
        ((200, "<html>login</html>"), "TOKEN_ENDPOINT_BAD_ANSWER", "answer has no access_token"),
        (
            (400, {"error": "invalid_scope"}),
            "TOKEN_ENDPOINT_REFUSED",
            "token endpoint refused the client (400 invalid_scope)",
        ),
        ((500, "oops"), "TOKEN_ENDPOINT_REFUSED", "token endpoint refused the client (HTTP 500)"),
        (
            (200, {"access_token": jwt({"sub": "s", "exp": 10})}),
            "TOKEN_EXPIRED",
            "answered a token that has already expired",
        ),
    ],
)
def test_it_names_what_is_wrong_with_the_answer(endpoint, answer, name, message):
    endpoint.answer = lambda req: answer
    with pytest.raises(KafkaOperationError) as exc:
        TokenSource(settings(endpoint.url), clock=Clock(50.0)).token()
    assert exc.value.name == name and message in exc.value.message
    assert SECRET not in str(exc.value)


def test_librdkafkas_callback_gets_the_token_its_expiry_principal_and_extensions(endpoint):
    exp = time.time() + 600
    endpoint.answer = lambda req: (200, {"access_token": jwt({"sub": "svc-console", "exp": exp})})
    cb = confluent_oauth_cb(settings(endpoint.url, extensions=(("logicalCluster", "lkc-1"),)), 5.0)
    value, expiry, principal, extensions = cb("")
    assert (expiry, principal, extensions) == (exp, "svc-console", {"logicalCluster": "lkc-1"})
    assert value.count(".") == 2
    assert cb("")[0] == value and len(endpoint.requests) == 1  # cached


def test_it_trusts_an_https_token_endpoint_signed_by_the_connections_ca(endpoint, tmp_path):
    import ssl

    from sandbox.pki import make_ca

    ca = make_ca("IdP Test CA")
    cert, key = ca.issue("localhost", sans=("localhost", "127.0.0.1"))
    (tmp_path / "idp.pem").write_text(cert + key)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp_path / "idp.pem")
    endpoint.server.socket = ctx.wrap_socket(endpoint.server.socket, server_side=True)
    url = endpoint.url.replace("http://", "https://")
    token = TokenSource(settings(url), clock=Clock(0.0), ca_pem=ca.cert_pem).token(timeout_s=5)
    assert token.principal == "svc" and len(endpoint.requests) == 1
    with pytest.raises(KafkaOperationError) as exc:
        TokenSource(settings(url)).token(timeout_s=5)  # the system's CAs only
    assert exc.value.name == "TOKEN_ENDPOINT_UNREACHABLE"
    assert exc.value.message.startswith(
        f"token endpoint unreachable: {url}: its TLS certificate was not accepted ("
    )
    assert "CERTIFICATE_VERIFY_FAILED" in exc.value.message
