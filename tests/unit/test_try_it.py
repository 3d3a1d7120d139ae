"""``make try-sso`` (tests/try_it.py): the directory and the identity provider the tests use, started for
a person, with the console's settings written down; Ctrl-C (or TERM) stops both."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.procs import free_port
from tests.sso import fixtures as sso

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def _settings(env_file: Path, process: subprocess.Popen) -> dict[str, str]:
    deadline = time.monotonic() + 90
    while not env_file.exists():
        assert process.poll() is None, process.stdout.read()
        assert time.monotonic() < deadline, "no settings written in 90 s"
        time.sleep(0.2)
    return dict(line.split("=", 1) for line in shlex.split(env_file.read_text(), comments=True))


def _refused(port: int) -> bool:
    try:
        requests.get(f"http://127.0.0.1:{port}/", timeout=2)
    except requests.ConnectionError:
        return True
    return False


def _started(env_file: Path):
    """``make try-sso``'s servers on free ports, with their settings. A port chosen free can be taken
    before slapd binds it (a busy test run's outgoing connections draw from the same range): slapd
    then exits at once, and the start is tried again on other ports, at most three times."""
    for attempt in range(3):
        ldap, ldaps, idp = free_port(), free_port(), free_port()
        argv = [sys.executable, "-m", "tests.try_it", "sso", "--env-file", str(env_file)]
        argv += ["--ldap-port", str(ldap), "--ldaps-port", str(ldaps), "--idp-port", str(idp)]
        process = subprocess.Popen(
            argv, cwd=BASE_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 90
        while not env_file.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if env_file.exists() or process.poll() is None:
            return process, (ldap, ldaps, idp)
        output = process.stdout.read()
        assert "slapd did not start" in output and attempt < 2, output
    raise AssertionError("unreachable")


def test_try_sso_starts_the_test_directory_and_provider_and_stops_them(tmp_path):
    env_file = tmp_path / "try-sso.env"
    process, (ldap, _ldaps, idp) = _started(env_file)
    try:
        settings = _settings(env_file, process)
        assert settings["LDAP_SERVER_URI"] == f"ldap://127.0.0.1:{ldap}"
        assert (
            settings["OIDC_ISSUER"] == f"http://localhost:{idp}/o"
        )  # the console's host name, as in a browser
        # the directory answers the console's bind account over StartTLS with the CA written down
        whoami = subprocess.run(
            ["ldapwhoami", "-x", "-ZZ", "-H", settings["LDAP_SERVER_URI"],
             "-D", settings["LDAP_BIND_DN"], "-w", settings["LDAP_BIND_PASSWORD"]],
            env={"LDAPTLS_CACERT": settings["LDAP_CA_CERT_FILE"]}, capture_output=True, text=True, timeout=10,
        )  # fmt: skip
        assert (whoami.returncode, whoami.stdout.strip()) == (0, f"dn:{sso.BIND_DN}"), whoami.stderr
        discovery = requests.get(f"{settings['OIDC_ISSUER']}/.well-known/openid-configuration", timeout=10)
        assert discovery.json()["issuer"] == settings["OIDC_ISSUER"]
        # the console's callback at `make run`'s address is a redirect the provider allows
        authorize = requests.get(
            discovery.json()["authorization_endpoint"],
            params={"client_id": settings["OIDC_CLIENT_ID"], "response_type": "code", "scope": "openid",
                    "redirect_uri": "http://localhost:8000/sso/oidc/callback/",
                    "code_challenge": "x" * 43, "code_challenge_method": "S256"},
            allow_redirects=False, timeout=10,
        )  # fmt: skip
        assert authorize.status_code == 302 and "/accounts/login/" in authorize.headers["Location"]
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0]
    assert process.returncode == 0, output
    assert "set -a; . " in output and "alice / alice-pw-1" in output
    assert _refused(idp) and _refused(ldap)
