"""Issue 31 on real Kafka 4.1: drive the console in Chromium through every secured listener of the cluster
scripts/kafka-secured/start.sh runs (SSL+mTLS, SASL_SSL/SCRAM-SHA-512, OAUTHBEARER, GSSAPI), and the quorum
page over an SSL controller connection (KIP-919). Not a pytest module (no test_ prefix): run it by hand,

    .venv/bin/python tests/e2e/real_secured_flow.py [/opt/realkafka/secured/endpoints.env] [--only mtls,scram]

It starts the console in-process (a fresh SQLite database in a temporary directory, the console's settings
from CONSOLE_* variables as `make run` reads them, Django's live-server thread, a worker thread standing in
for Celery) and prints one line per step per listener: PASS or FAIL with what was seen. Exit 1 if any failed.
Each listener's steps: register through the page (Test connection first), the topic list, create a topic,
alter its config, an ACL create + delete, a throttled reassignment to completion with every throttle gone
afterwards (checked with kafka-configs.sh), consumer group lag after Kafka's console producer and consumer
(compared with kafka-consumer-groups.sh), and deleting the topic.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
USER, PASSWORD = "flow-admin", "flow-admin-pw-1"
THROTTLES = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
)
CONFIG_FLAGS = {
    "kafka-console-producer.sh": "--producer.config",
    "kafka-console-consumer.sh": "--consumer.config",
    "kafka-producer-perf-test.sh": "--producer.config",
}
RESULTS: list[tuple[str, str, bool, str]] = []


def no_dispatch(op_id: int, countdown: float | None = None) -> str:
    """OPERATION_DISPATCHER / NOTIFY_DISPATCHER: the worker thread below picks pending work up itself."""
    return f"flow-{op_id}"


def read_env(path: str) -> dict[str, str]:
    env = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.split("  #", 1)[0].strip()
        env[key.strip()] = shlex.split(value)[0] if value else ""
    return env


def report(listener: str, step: str, ok: bool, detail: str) -> None:
    RESULTS.append((listener, step, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'} {listener:<10} {step:<22} {detail}", flush=True)


class Tools:
    """Kafka's own command-line tools against one listener (its --command-config file)."""

    def __init__(self, env: dict[str, str], listener: str, bootstrap: str) -> None:
        self.env, self.bootstrap = env, bootstrap
        self.config = f"{env['CLIENT_PROPERTIES_DIR']}/{listener}-console.properties"
        self.proc_env = {**os.environ, "KAFKA_OPTS": env["TOOLS_KAFKA_OPTS"], "KAFKA_HEAP_OPTS": "-Xmx256m"}

    def run(self, tool: str, *args: str, stdin: str | None = None, timeout: float = 180) -> str:
        flag = CONFIG_FLAGS.get(tool, "--command-config")
        server = ["--bootstrap-server", self.bootstrap]
        if tool == "kafka-producer-perf-test.sh":  # no --bootstrap-server option
            server = ["--producer-props", f"bootstrap.servers={self.bootstrap}", "acks=all"]
        cmd = [f"{self.env['KAFKA_HOME']}/bin/{tool}", *args, *server, flag, self.config]
        done = subprocess.run(
            cmd, input=stdin, capture_output=True, text=True, timeout=timeout, env=self.proc_env
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args[:4])}: {done.stderr.strip()[-400:]}")
        return done.stdout

    def throttles(self, topic: str) -> dict[str, str]:
        """Every throttle config set on the topic and on each broker: {"topic:x:name" | "broker:1:name": value}."""
        found = {}
        out = self.run("kafka-configs.sh", "--describe", "--entity-type", "topics", "--entity-name", topic)
        for name, value in re.findall(r"^\s+(\S+)=(\S+) sensitive", out, re.M):
            if name in THROTTLES:
                found[f"topic:{topic}:{name}"] = value
        out = self.run("kafka-configs.sh", "--describe", "--entity-type", "brokers", "--all")
        for block in re.split(r"All configs for broker ", out)[1:]:
            broker = block.split(" ", 1)[0]
            for name, value in re.findall(r"^\s+(\S+)=(\S+) sensitive", block, re.M):
                if name in THROTTLES and value != "null":
                    found[f"broker:{broker}:{name}"] = value
        return found

    def replicas(self, topic: str) -> list[int]:
        out = self.run("kafka-topics.sh", "--describe", "--topic", topic)
        found = re.search(r"Partition: 0\s+Leader: \S+\s+Replicas: ([\d,]+)", out)
        if not found:
            raise RuntimeError(f"no partition 0 in: {out[-300:]}")
        return [int(b) for b in found.group(1).split(",")]


# -- the console ------------------------------------------------------------------------------------


def start_console(workdir: Path):
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "CONSOLE_VAR_DIR": str(workdir),
            "DATABASE_URL": f"sqlite:///{workdir / 'console.sqlite3'}",
            "OPERATION_DISPATCHER": "tests.e2e.real_secured_flow.no_dispatch",
            "NOTIFY_DISPATCHER": "tests.e2e.real_secured_flow.no_dispatch",
            "DJANGO_ALLOW_ASYNC_UNSAFE": "true",
            "OPERATION_BACKOFF_S": "1",
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.management import call_command
    from django.test.testcases import LiveServerThread

    call_command("migrate", verbosity=0)
    get_user_model().objects.create_superuser(username=USER, password=PASSWORD)
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait(30)
    if server.error:
        raise server.error
    return server, f"http://127.0.0.1:{server.port}"


def start_worker() -> threading.Event:
    """Celery's stand-in: run pending operations and due polls every half second."""
    from django.db import close_old_connections

    from console import operations
    from console.models import Operation

    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                for op_id in Operation.objects.filter(state="pending").values_list("pk", flat=True):
                    operations.run(op_id, worker="flow")
                operations.run_due(worker="flow")
            except Exception as exc:  # noqa: BLE001 - keep the stand-in alive, say what happened
                print(f"worker: {type(exc).__name__}: {exc}", flush=True)
            finally:
                close_old_connections()
            time.sleep(0.5)

    threading.Thread(target=loop, daemon=True).start()
    return stop


# -- the page steps ---------------------------------------------------------------------------------


def register(page, base: str, name: str, fields: dict, files: dict) -> str:
    page.goto(f"{base}/clusters/new/")
    page.fill("#id_name", name)
    page.fill("#id_request_timeout_s", "15")
    for key in ("security_protocol", "sasl_mechanism"):
        if key in fields:
            page.select_option(f"#id_{key}", fields[key])

    def fill_rest() -> None:
        for key, value in fields.items():
            if key not in ("security_protocol", "sasl_mechanism"):
                page.fill(f"#id_{key}", value)
        for key, path in files.items():
            page.set_input_files(f"#id_{key}", path)

    fill_rest()
    page.click("#cluster-test")
    page.locator("#connection-report").wait_for(timeout=60000)
    text = " ".join(page.inner_text("#connection-report").split())
    if not text.startswith("Connected"):
        raise RuntimeError(f"Test connection: {text[:900]}")
    fill_rest()  # secrets and uploads are not kept by the page after a test
    page.click("#cluster-save")
    page.wait_for_url(f"{base}/c/{name}/", timeout=60000)
    return text[:200]


def topic_list(page, base: str, name: str) -> str:
    page.goto(f"{base}/c/{name}/topics/")
    page.locator("#topics").wait_for()
    errors = page.locator(".error-box").all_inner_texts()
    if errors:
        raise RuntimeError(errors[0][:300])
    return f"{page.locator('#topics tr[data-topic]').count()} topics listed"


def topic_create(page, base: str, name: str, topic: str) -> str:
    from tests.e2e.pages import create_topic

    page.goto(f"{base}/c/{name}/topics/")
    create_topic(page, f"{base}/c/{name}", topic, 1, 2, timeout=60000)
    return f"{topic}: {page.locator('#partitions tbody tr').count()} partition"


def alter_config(page, base: str, name: str, topic: str) -> str:
    from tests.e2e.pages import preview_config_change

    page.goto(f"{base}/c/{name}/topics/{topic}/")
    page.click("text=Edit configs")
    preview_config_change(page, "retention.ms", "7200000")
    page.locator("#config-diff").wait_for()
    page.click("button[value=apply]")
    page.locator(".messages", has_text="applied").wait_for(timeout=60000)
    row = " ".join(page.inner_text("#configs tr[data-config='retention.ms']").split())
    if "7200000" not in row:
        raise RuntimeError(f"retention.ms row: {row}")
    return f"retention.ms -> 7200000 ({row[:60]})"


def acl_change(page, base: str, name: str, topic: str, tools: Tools) -> str:
    from tests.e2e.pages import apply_acls, review_acl_binding

    page.goto(f"{base}/c/{name}/acls/new/")
    review_acl_binding(page, topic, "User:flow-app", "READ")
    created = apply_acls(page, timeout=60000)
    listed = tools.run("kafka-acls.sh", "--list", "--topic", topic)
    if "created" not in created or "User:flow-app" not in listed:
        raise RuntimeError(f"page: {created[:200]}; kafka-acls.sh: {listed[-200:]}")
    page.goto(f"{base}/c/{name}/acls/?resource_name={topic}")
    page.click("#acl-delete-matching")
    page.locator("#acl-deletes").wait_for()
    apply_acls(page, timeout=60000)
    after = tools.run("kafka-acls.sh", "--list", "--topic", topic)
    if "User:flow-app" in after:
        raise RuntimeError(f"still listed after delete: {after[-200:]}")
    return "READ for User:flow-app created (seen by kafka-acls.sh) and deleted"


RATES = {"mtls": "1.111", "scram": "1.122", "oauth": "1.133", "kerberos": "1.144"}  # MB/s, one per listener


def reassign(page, base: str, name: str, topic: str, tools: Tools, listener: str) -> str:
    """A throttled move; the rate is this listener's own odd value, so the check is not confused by other
    runs (the contract suite) setting throttles on the same brokers meanwhile."""
    from decimal import Decimal

    tools.run("kafka-producer-perf-test.sh", "--topic", topic, "--num-records", "20000", "--record-size", "500",
              "--throughput", "-1")  # fmt: skip
    rate = str(int(Decimal(RATES[listener]) * 1024 * 1024))
    before = tools.replicas(topic)
    spare = next(b for b in (1, 2, 3) if b not in before)
    target = [spare, before[0]]
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": target}]}
    page.goto(f"{base}/c/{name}/reassignments/new/")
    page.fill("#id_plan_json", json.dumps(plan))
    page.fill("#id_throttle_mb", RATES[listener])
    page.click("button[value=preview]")
    page.locator("#diff").wait_for(timeout=60000)
    page.click("button[value=start]")
    page.wait_for_url(re.compile(rf".*/c/{name}/reassignments/\d+/"), timeout=60000)

    def ours(found: dict[str, str]) -> list[str]:
        return sorted(k for k, v in found.items() if k.startswith("topic:") or v == rate)

    deadline = time.monotonic() + 240
    text, during = "", []
    while time.monotonic() < deadline:
        text = " ".join(page.inner_text("#reassign-progress").split())
        if any(word in text for word in ("Succeeded", "Failed", "Errored", "Cancelled")):
            break
        if not during:  # once, while the move runs: the throttles Kafka has
            during = ours(tools.throttles(topic))
        time.sleep(1)
        page.reload()
    if "Succeeded" not in text:
        raise RuntimeError(f"progress: {text[:300]}")
    after = tools.replicas(topic)
    left = ours(tools.throttles(topic))
    if sorted(after) != sorted(target) or left:
        raise RuntimeError(f"replicas {after} (wanted {target}); throttles of this move left: {left}")
    seen = ", ".join(during) if during else "none (the move ended first)"
    return (
        f"{before} -> {after} at {rate} B/s; during the move kafka-configs.sh showed {seen}; none left after"
    )


def group_lag(page, base: str, name: str, topic: str, tools: Tools) -> str:
    group = f"flow-group-{uuid.uuid4().hex[:6]}"
    lines = "\n".join(f"message-{i}" for i in range(50)) + "\n"
    tools.run("kafka-console-producer.sh", "--topic", topic, stdin=lines)
    tools.run("kafka-console-consumer.sh", "--topic", topic, "--group", group, "--from-beginning",
              "--max-messages", "10", "--timeout-ms", "30000")  # fmt: skip
    described = tools.run("kafka-consumer-groups.sh", "--describe", "--group", group)
    kafka_lag = sum(int(m) for m in re.findall(rf"{re.escape(topic)}\s+\d+\s+\d+\s+\d+\s+(\d+)", described))
    page.goto(f"{base}/c/{name}/groups/{group}/")
    page.locator("#total-lag").wait_for(timeout=60000)
    shown = page.inner_text("#total-lag").strip().replace(",", "")
    if shown != str(kafka_lag):
        raise RuntimeError(f"page total lag {shown!r}, kafka-consumer-groups.sh {kafka_lag}")
    return f"group {group}: lag {shown} on the page = kafka-consumer-groups.sh"


def topic_delete(page, base: str, name: str, topic: str, tools: Tools) -> str:
    page.goto(f"{base}/c/{name}/topics/{topic}/")
    page.fill(".danger-zone input[name=confirmation]", topic)
    page.click(".danger-zone button[type=submit]")
    page.wait_for_load_state()
    if page.locator("input[name=confirmation]").count() and "delete" in page.url:
        page.fill("input[name=confirmation]", topic)
        page.click(".danger-zone button.danger")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if topic not in tools.run("kafka-topics.sh", "--list").split():
            return f"{topic} gone (kafka-topics.sh --list)"
        time.sleep(2)
    raise RuntimeError(f"{topic} still listed; page: {page.inner_text('main')[:300]}")


def bad_cases(env: dict) -> dict[str, tuple[str, dict, dict, str]]:
    """Settings that must fail Test connection with the cause named: (listener, fields, files, error name)."""
    text = lambda key: Path(env[key]).read_text()  # noqa: E731
    mtls = {
        "bootstrap_servers": env["BOOTSTRAP_MTLS"],
        "security_protocol": "SSL",
        "ca_certificate": text("CA_FILE"),
    }
    scram = {
        "bootstrap_servers": env["BOOTSTRAP_SCRAM"],
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "ca_certificate": text("CA_FILE"),
        "sasl_username": env["SCRAM_USERNAME"],
    }
    oauth = {
        "bootstrap_servers": env["BOOTSTRAP_OAUTH"],
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "OAUTHBEARER",
        "oauth_client_id": env["OAUTH_CLIENT_ID"],
        "oauth_scope": "openid",
    }
    return {
        "wrong CA": ("mtls", {**mtls, "ca_certificate": text("OTHER_CA_FILE"),
                              "client_certificate": text("CLIENT_CERT_FILE"), "client_key": text("CLIENT_KEY_FILE")},
                     {}, "TLS_SERVER_CERTIFICATE_REJECTED"),
        "no client certificate": ("mtls", mtls, {}, "TLS_CLIENT_CERTIFICATE_REFUSED"),
        "expired client cert": ("mtls", {**mtls, "client_certificate": text("EXPIRED_CERT_FILE"),
                                         "client_key": text("EXPIRED_KEY_FILE")}, {}, "TLS_CLIENT_CERTIFICATE_REFUSED"),
        "other-CA client cert": ("mtls", {**mtls, "client_certificate": text("OTHER_CA_CERT_FILE"),
                                          "client_key": text("OTHER_CA_KEY_FILE")}, {},
                                 "TLS_CLIENT_CERTIFICATE_REFUSED"),
        "wrong password": ("scram", {**scram, "sasl_password": "not-the-password"}, {}, "SASL_AUTHENTICATION_FAILED"),
        "wrong client secret": ("oauth", {**oauth, "oauth_token_endpoint": env["OAUTH_TOKEN_ENDPOINT"],
                                          "oauth_client_secret": "not-the-secret"}, {}, "TOKEN_ENDPOINT_REFUSED"),
        "token endpoint down": ("oauth", {**oauth, "oauth_token_endpoint": "http://127.0.0.1:9/o/token/",
                                          "oauth_client_secret": env["OAUTH_CLIENT_SECRET"]}, {},
                                "TOKEN_ENDPOINT_UNREACHABLE"),
        "wrong keytab": ("kerberos", {"bootstrap_servers": env["BOOTSTRAP_KERBEROS"],
                                      "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI",
                                      "kerberos_principal": env["KERBEROS_PRINCIPAL"],
                                      "kerberos_krb5_conf": text("KRB5_CONF_FILE")},
                         {"kerberos_keytab": env["KERBEROS_NOBODY_KEYTAB_FILE"]}, "KERBEROS_LOGIN_FAILED"),
    }  # fmt: skip


def bad_case(page, base: str, fields: dict, files: dict, error_name: str) -> str:
    """Test connection fails with ``error_name`` and its cause on the page; no cluster is saved."""
    from console.models import Cluster

    count = Cluster.objects.count()
    name = f"bad-{uuid.uuid4().hex[:6]}"
    try:
        register(page, base, name, fields, files)
    except RuntimeError as exc:
        text = str(exc).removeprefix("Test connection: ")
    else:
        raise RuntimeError("Test connection succeeded (and the cluster was saved)")
    if not text.startswith(f"Connection failed {error_name}: ") or Cluster.objects.count() != count:
        raise RuntimeError(f"page said: {text[:400]} ({Cluster.objects.count() - count} saved)")
    advice_end = text.find(". (")  # the operator advice, then Kafka's or the probe's own detail
    return text[advice_end + 2 :] if advice_end > 0 else text


def quorum(page, base: str, env: dict) -> str:
    fields = {
        "bootstrap_controllers": env["BOOTSTRAP_CONTROLLERS"],
        "security_protocol": "SSL",
        "ca_certificate": Path(env["CA_FILE"]).read_text(),
        "client_certificate": Path(env["CLIENT_CERT_FILE"]).read_text(),
        "client_key": Path(env["CLIENT_KEY_FILE"]).read_text(),
    }
    said = register(page, base, "real-controllers", fields, {})
    page.goto(f"{base}/c/real-controllers/quorum/")
    leader = page.inner_text("#leader-id").strip()
    voters = page.locator("#voters tbody tr").count()
    if leader != "101" or voters != 1:
        raise RuntimeError(f"leader {leader!r}, {voters} voters")
    return f"leader 101, 1 voter ({said[:80]})"


# -- the listeners ----------------------------------------------------------------------------------


def listeners(env: dict) -> dict[str, tuple[str, dict, dict]]:
    ca = Path(env["CA_FILE"]).read_text()
    return {
        "mtls": ("mtls", {"bootstrap_servers": env["BOOTSTRAP_MTLS"], "security_protocol": "SSL",
                          "client_pkcs12_password": env["CLIENT_P12_PASSPHRASE"]},
                 {"client_pkcs12": env["CLIENT_P12_FILE"]}),
        "scram": ("scram", {"bootstrap_servers": env["BOOTSTRAP_SCRAM"], "security_protocol": "SASL_SSL",
                            "sasl_mechanism": "SCRAM-SHA-512", "ca_certificate": ca,
                            "sasl_username": env["SCRAM_USERNAME"], "sasl_password": env["SCRAM_PASSWORD"]}, {}),
        "oauth": ("oauth", {"bootstrap_servers": env["BOOTSTRAP_OAUTH"], "security_protocol": "SASL_PLAINTEXT",
                            "sasl_mechanism": "OAUTHBEARER", "oauth_token_endpoint": env["OAUTH_TOKEN_ENDPOINT"],
                            "oauth_client_id": env["OAUTH_CLIENT_ID"],
                            "oauth_client_secret": env["OAUTH_CLIENT_SECRET"], "oauth_scope": env["OAUTH_SCOPE"]},
                  {}),
        "kerberos": ("kerberos", {"bootstrap_servers": env["BOOTSTRAP_KERBEROS"],
                                  "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI",
                                  "kerberos_principal": env["KERBEROS_PRINCIPAL"],
                                  "kerberos_service_name": env["KERBEROS_SERVICE_NAME"],
                                  "kerberos_krb5_conf": Path(env["KRB5_CONF_FILE"]).read_text()},
                     {"kerberos_keytab": env["KERBEROS_KEYTAB_FILE"]}),
    }  # fmt: skip


def run_listener(page, base: str, env: dict, listener: str, spec: tuple[str, dict, dict]) -> None:
    tool_name, fields, files = spec
    tools = Tools(env, tool_name, fields["bootstrap_servers"])
    name = f"real-{listener}"
    topic = f"flow.{listener}-{uuid.uuid4().hex[:6]}"
    steps = [
        ("register+test", lambda: register(page, base, name, fields, files)),
        ("topic list", lambda: topic_list(page, base, name)),
        ("topic create", lambda: topic_create(page, base, name, topic)),
        ("topic alter config", lambda: alter_config(page, base, name, topic)),
        ("acl change", lambda: acl_change(page, base, name, topic, tools)),
        ("throttled reassign", lambda: reassign(page, base, name, topic, tools, listener)),
        ("consumer group lag", lambda: group_lag(page, base, name, topic, tools)),
        ("topic delete", lambda: topic_delete(page, base, name, topic, tools)),
    ]
    for step, action in steps:
        started = time.monotonic()
        try:
            detail = action()
            report(listener, step, True, f"{detail} [{time.monotonic() - started:.1f}s]")
        except Exception as exc:  # noqa: BLE001 - one line per step, then the next step
            first = " ".join(str(exc).split())[:500]
            report(listener, step, False, f"{type(exc).__name__}: {first}")
            if os.environ.get("FLOW_TRACE"):
                traceback.print_exc()
            if step == "register+test":
                return


def main(argv: list[str]) -> int:
    env_file = next((a for a in argv if not a.startswith("--")), "/opt/realkafka/secured/endpoints.env")
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), "")
    env = read_env(env_file)
    workdir = Path(tempfile.mkdtemp(prefix="real-secured-flow-"))
    server, base = start_console(workdir)
    stop = start_worker()
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import ARGS, CHROMIUM

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            context = browser.new_context()
            context.set_default_timeout(30000)
            page = context.new_page()
            page.goto(f"{base}/login/")
            page.fill("#id_username", USER)
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_load_state()
            for listener, spec in listeners(env).items():
                if not only or listener in only.split(","):
                    run_listener(page, base, env, listener, spec)
            if not only or "bad" in only.split(","):
                for case, (listener, fields, files, error_name) in bad_cases(env).items():
                    try:
                        report(
                            listener, f"bad: {case}", True, bad_case(page, base, fields, files, error_name)
                        )
                    except Exception as exc:  # noqa: BLE001
                        report(listener, f"bad: {case}", False, f"{type(exc).__name__}: {str(exc)[:400]}")
            if not only or "controllers" in only.split(","):
                try:
                    report("controller", "quorum over SSL", True, quorum(page, base, env))
                except Exception as exc:  # noqa: BLE001
                    report("controller", "quorum over SSL", False, f"{type(exc).__name__}: {str(exc)[:400]}")
            browser.close()
    finally:
        stop.set()
        server.terminate()
    failed = [r for r in RESULTS if not r[2]]
    print(
        f"{len(RESULTS) - len(failed)} passed, {len(failed)} failed (console data in {workdir})", flush=True
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
