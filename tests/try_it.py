"""``make try-sso`` / ``make try-spark``: the servers the tests start, started for a person beside
``make run`` (docs/try.md), with the same start code as the tests' fixtures (tests/sso/fixtures.py,
tests/pipeline/standalone.py), on fixed ports so the console's settings can be written down once.

``python -m tests.try_it sso``: slapd with the test directory and the OIDC provider (another Django app,
on ``localhost`` like the console). ``python -m tests.try_it spark``: a Spark standalone master and a
worker. Each writes the console's settings to var/try-<what>.env, prints them, and runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from tests.pipeline import standalone
from tests.sso import fixtures as sso

BASE_DIR = Path(__file__).resolve().parent.parent
CONSOLE = ("http://localhost:8000", "http://127.0.0.1:8000")  # where `make run` serves the console


def sso_settings(directory: sso.Directory, provider: sso.Provider) -> dict[str, str]:
    """The console's environment for the directory and the provider (docs/sso.md names each)."""
    return {
        "LDAP_SERVER_URI": directory.uri,
        "LDAP_START_TLS": "true",
        "LDAP_CA_CERT_FILE": directory.ca_file,
        "LDAP_BIND_DN": sso.BIND_DN,
        "LDAP_BIND_PASSWORD": sso.BIND_PW,
        "LDAP_USER_SEARCH_BASE": sso.PEOPLE,
        "LDAP_GROUP_SEARCH_BASE": sso.GROUPS,
        "LDAP_GROUP_TYPE": "groupOfNames",
        "OIDC_ISSUER": provider.issuer,
        "OIDC_CLIENT_ID": provider.client_id,
        "OIDC_CLIENT_SECRET": provider.client_secret,
        "OIDC_GROUPS_CLAIM": "groups",
    }


@contextmanager
def sso_servers(workdir: Path, ldap_port: int, ldaps_port: int, idp_port: int) -> Iterator[dict[str, str]]:
    callbacks = tuple(f"{url}/sso/oidc/callback/" for url in CONSOLE)
    with ExitStack() as stack:
        directory = stack.enter_context(sso.running_slapd(workdir / "slapd", ldap_port, ldaps_port))
        provider = stack.enter_context(
            sso.running_provider(workdir / "idp", idp_port, host="localhost", redirect_uris=callbacks)
        )
        yield sso_settings(directory, provider)


@contextmanager
def spark_servers(workdir: Path, port: int, ui_port: int) -> Iterator[dict[str, str]]:
    with standalone.running_standalone(workdir, workers=1, memory="1g", port=port, ui_port=ui_port) as s:
        deadline = time.monotonic() + 90
        while standalone.alive_workers(s.ui_port) < 1:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Spark worker did not register; see {s.logs}")
            time.sleep(0.5)
        # the driver (a `make run` worker) and its executors run this Python, on loopback
        yield {"SPARK_MASTER": s.url, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}


PEOPLE = "\n".join(
    f"  {user} / {password}  (groups: {', '.join(groups) or 'none'})"
    for user, (password, groups) in sso.USERS.items()
)
NOTES = {
    "sso": "Log in at http://localhost:8000/login/ through the directory (the user-name form) or with "
    "'Log in with single sign-on':\n" + PEOPLE + "\nTheir groups become console groups "
    "(ldap:cn=kafka-operators,ou=groups,dc=example,dc=org, oidc:kafka-operators): bind one to a role on "
    "a cluster's Access page (docs/sso.md).",
    "spark": "The master's UI: http://127.0.0.1:{ui}/ . With these settings `make run`'s batch worker runs "
    "the pipeline's Spark jobs there (a rebuild, or a run of PIPELINE_SPARK_MIN_ROWS rows or more).",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.try_it", description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("sso", "spark"))
    parser.add_argument("--ldap-port", type=int, default=3389)
    parser.add_argument("--ldaps-port", type=int, default=3636)
    parser.add_argument("--idp-port", type=int, default=8001)
    parser.add_argument("--spark-port", type=int, default=7077)
    parser.add_argument("--spark-ui-port", type=int, default=8090)
    parser.add_argument("--env-file", type=Path, help="where the settings go (default: var/try-<what>.env)")
    args = parser.parse_args(argv)
    if args.what == "spark" and (lack := standalone.missing()):
        print(lack, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop as on Ctrl-C: the servers go with us
    env_file = (args.env_file or BASE_DIR / "var" / f"try-{args.what}.env").resolve()
    env_file.parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"try-{args.what}-") as tmp:
        if args.what == "sso":
            servers = sso_servers(Path(tmp), args.ldap_port, args.ldaps_port, args.idp_port)
        else:
            servers = spark_servers(Path(tmp), args.spark_port, args.spark_ui_port)
        with servers as settings:
            lines = "".join(f"{k}={shlex.quote(v)}\n" for k, v in settings.items())
            env_file.write_text(lines)
            print(lines)
            print(f"Written to {env_file}. In another terminal:")
            print(f"  set -a; . {env_file}; set +a; make run")
            print(NOTES[args.what].format(ui=args.spark_ui_port))
            print("Ctrl-C stops them.", flush=True)
            try:
                signal.pause()
            except KeyboardInterrupt:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
