"""Issue 32 item 6: the image and the compose stack, checked without a Docker engine.

The Dockerfile is read with dockerfile-parse and docker-compose.yml with PyYAML; every command a service
runs is parsed by the program it names (Django's command parsers, Celery's click commands, gunicorn's
argument parser), so a renamed command, option, queue or config file fails here rather than at
``docker compose up``. docs/production.md is checked against them in test_deploy_docs.py.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import runpy
import shlex
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import warnings
from pathlib import Path, PurePosixPath

import dj_database_url
import pytest
import yaml
from dockerfile_parse import DockerfileParser

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict] = COMPOSE["services"]
KEYS = ("SECRET_KEY", "CONSOLE_ENCRYPTION_KEY", "AUDIT_HMAC_KEY")


# -- the Dockerfile ---------------------------------------------------------------------------------------


def dockerfile() -> DockerfileParser:
    return DockerfileParser(str(ROOT / "Dockerfile"))


def stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's build stages, each a list of (INSTRUCTION, value) from its FROM on."""
    found: list[list[tuple[str, str]]] = []
    for item in dockerfile().structure:
        if item["instruction"] == "FROM":
            found.append([])
        if found and item["instruction"] != "COMMENT":
            found[-1].append((item["instruction"], " ".join(item["value"].split())))
    return found


def global_args() -> dict[str, str]:
    """The ARGs before the first FROM (their defaults hold for every stage that declares them)."""
    found = {}
    for item in dockerfile().structure:
        if item["instruction"] == "FROM":
            return found
        if item["instruction"] == "ARG":
            key, _, value = item["value"].partition("=")
            found[key] = value
    return found


def final_stage() -> list[tuple[str, str]]:
    return stages()[-1]


def shell_commands(script: str) -> list[list[str]]:
    """A shell line as the argv of each command it runs (split at && || ; |, redirections dropped)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    skip = False
    for token in lexer:
        if skip:
            skip = False
        elif token in ("&&", "||", ";", "|", ";;"):
            commands.append([])
        elif token in (">", ">>", "<", "2>"):
            skip = True
        else:
            commands[-1].append(token)
    return [argv for argv in commands if argv]


def run_commands(stage: list[tuple[str, str]]) -> list[list[str]]:
    return [argv for kind, value in stage if kind == "RUN" for argv in shell_commands(value)]


def apt_installed(stage: list[tuple[str, str]]) -> set[str]:
    return {
        word
        for argv in run_commands(stage)
        if argv[:2] == ["apt-get", "install"]
        for word in argv[2:]
        if not word.startswith("-")
    }


def image_env() -> dict[str, str]:
    return dockerfile().envs


def image_workdir() -> str:
    return [value for kind, value in final_stage() if kind == "WORKDIR"][-1]


# -- docker-compose.yml -----------------------------------------------------------------------------------


def app_services() -> dict[str, dict]:
    """The services that run the console's image (built from this Dockerfile)."""
    return {name: svc for name, svc in SERVICES.items() if "build" in svc}


def interpolated(value: str) -> str:
    """Compose's ${NAME}, ${NAME:?error} with a stand-in value per name, ${NAME:-default} with its
    default (what compose uses when .env leaves it unset); $$ is a $."""

    def one(m: re.Match) -> str:
        return m[3] if m[2] in (":-", "-") else f"value-of-{m[1].lower()}"

    text = re.sub(r"\$\{(\w+)(?:(:?[-?+])([^}]*))?\}", one, value)
    return text.replace("$$", "$")


def service_commands(svc: dict) -> list[list[str]]:
    """What a service runs, each command as its argv: `sh -c` scripts split, else the image's CMD."""
    command = svc.get("command")
    if command is None:
        command = dockerfile().cmd
        command = yaml.safe_load(command) if command.startswith("[") else command
    if isinstance(command, str):
        return shell_commands(interpolated(command))
    if command[:2] == ["sh", "-c"]:
        return shell_commands(interpolated(command[2]))
    return [[interpolated(word) for word in command]]


def healthcheck_commands(check: dict | str) -> list[list[str]]:
    test = check["test"] if isinstance(check, dict) else check
    if isinstance(test, str):
        return shell_commands(interpolated(test))
    if test[0] == "CMD-SHELL":
        return shell_commands(interpolated(test[1]))
    assert test[0] == "CMD", test
    return [[interpolated(word) for word in test[1:]]]


def named_mounts(svc: dict) -> dict[str, tuple[str, bool]]:
    """{target: (named volume, writable)} of a service's short-syntax volume mounts."""
    mounts = {}
    for spec in svc.get("volumes", []):
        source, target, *mode = spec.split(":")
        assert source in COMPOSE["volumes"], f"{spec}: not a named volume of the stack"
        mounts[target] = (source, "ro" not in (mode[0].split(",") if mode else []))
    return mounts


# -- resolving an argv to the program it names --------------------------------------------------------------


def celery_call(argv: list[str]):
    """(subcommand, its parsed options, the app) as Celery's own command line would parse them."""
    from celery.app.utils import find_app
    from celery.bin.base import CLIContext
    from celery.bin.celery import celery

    ctx = celery.make_context("celery", list(argv))
    app = find_app(ctx.params["app"])
    ctx.obj = CLIContext(app=app, no_color=True, workdir=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # click 8.2's protected_args
        name, command, rest = celery.resolve_command(ctx, [*ctx.protected_args, *ctx.args])
    return name, command.make_context(name, rest, parent=ctx).params, app


def resolve(argv: list[str]) -> tuple[str, object]:
    """What an argv runs in the project, or an AssertionError naming what does not exist."""
    from django.core.management import get_commands, load_command_class

    if argv[:2] in (["python", "manage.py"], ["python3", "manage.py"]):
        assert (ROOT / "manage.py").is_file()
        commands = get_commands()
        assert argv[2] in commands, f"manage.py has no command {argv[2]!r}"
        parser = load_command_class(commands[argv[2]], argv[2]).create_parser("manage.py", argv[2])
        return "manage.py", (argv[2], parser.parse_args(argv[3:]))  # CommandError on an unknown option
    if argv[:3] == ["python", "-m", "celery"] or argv[0] == "celery":
        return "celery", celery_call(argv[3:] if argv[0] == "python" else argv[1:])
    if argv[0] == "gunicorn" or argv[:3] == ["python", "-m", "gunicorn"]:
        from gunicorn.config import Config

        args = Config().parser().parse_args(argv[3:] if argv[0] == "python" else argv[1:])
        config = ROOT / args.config  # the image runs from its WORKDIR, a copy of this repository
        assert image_workdir() == "/app" and config.is_file(), args.config
        assert runpy.run_path(str(config))["worker_class"]
        module, _, attr = args.args[0].partition(":")
        assert callable(getattr(importlib.import_module(module), attr or "application"))
        return "gunicorn", args
    raise AssertionError(f"{argv}: not an entry point of the console")


def served_queues() -> dict[str, list[str]]:
    """{queue: [services whose Celery worker consumes it]}."""
    served: dict[str, list[str]] = {}
    for name, svc in app_services().items():
        for kind, call in (resolve(argv) for argv in service_commands(svc)):
            if kind == "celery" and call[0] == "worker":
                for queue in call[1]["queues"]:
                    served.setdefault(queue, []).append(name)
    return served


def routed_queues(settings) -> set[str]:
    """Every queue a task can be sent to: the routes by name, the operation kinds' (tasks/routing.py)."""
    from tasks.routing import queue_for_kind

    by_name = {route["queue"] for route in settings.CELERY_TASK_ROUTES[1].values()}
    by_kind = {queue_for_kind(kind) for kind in [*settings.OPERATION_QUEUES, "any.other.kind"]}
    return by_name | by_kind | {settings.CELERY_TASK_DEFAULT_QUEUE}


# -- the names the console reads ------------------------------------------------------------------------------


def environment_names(*modules: str) -> set[str]:
    """Environment variables a module reads: os.environ.get / os.environ[...] / _env_*("NAME", ...)."""
    names = set()
    for module in modules:
        for node in ast.walk(ast.parse((ROOT / module).read_text())):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                func = node.func
                reads = (isinstance(func, ast.Attribute) and ast.unparse(func) == "os.environ.get") or (
                    isinstance(func, ast.Name) and func.id.startswith("_env")
                )
                if reads and isinstance(node.args[0].value, str):
                    names.add(node.args[0].value)
            elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                if isinstance(node.slice, ast.Constant):
                    names.add(node.slice.value)
    return names


SETTINGS_MODULES = (
    "console/settings.py",
    "console/settings_celery.py",
)  # the second is imported by the first


def project_environment_names() -> set[str]:
    modules = [
        str(p.relative_to(ROOT)) for d in ("console", "tasks", "pipeline") for p in (ROOT / d).rglob("*.py")
    ]
    return environment_names(*modules)


# == the image ===============================================================================================


def test_it_installs_java_for_the_batch_workers_spark_runs_and_checks_it_at_build_time():
    stage = final_stage()
    assert "openjdk-17-jre-headless" in apt_installed(stage)
    assert ["java", "-version"] in run_commands(stage)
    base = stage[0][1].split()[0]
    assert base.startswith("python:3.11-") and base.endswith("-bookworm"), base  # Debian 12 has Java 17


def test_it_installs_every_extra_with_its_build_packages_left_in_the_builder_stage():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    assert set(global_args()["EXTRAS"].split(",")) == extras - {"dev"}  # dev: the test suite's
    assert all(("ARG", "EXTRAS") in stage for stage in stages())  # each stage takes the global default

    builder, final = stages()[0], final_stage()
    assert builder[0][1].endswith(" AS builder")
    assert ["pip", "install", "/src${EXTRAS:+[$EXTRAS]}"] in run_commands(builder)
    assert {"build-essential", "libldap2-dev", "libsasl2-dev", "libkrb5-dev"} <= apt_installed(builder)
    assert not {pkg for pkg in apt_installed(final) if pkg.endswith("-dev") or pkg == "build-essential"}
    assert ("COPY", "--from=builder /opt/venv /opt/venv") in final
    assert image_env()["PATH"].startswith("/opt/venv/bin:")
    # The build imports the extras' modules, so a missing runtime library fails the build.
    assert any("import django_auth_ldap, ldap" in " ".join(argv) for argv in run_commands(final))
    assert any("import gssapi" in " ".join(argv) for argv in run_commands(final))


def test_it_builds_the_consoles_c_extensions_in_the_builder_and_ships_them_beside_their_package():
    """Each Extension in setup.py (the Metadata decoder): compiled in the builder stage (the image has no
    compiler), copied over the code in /app, and imported at build time."""
    calls = [n for n in ast.walk(ast.parse((ROOT / "setup.py").read_text())) if isinstance(n, ast.Call)]
    extensions = [
        (ast.literal_eval(c.args[0]), ast.literal_eval(c.args[1]))
        for c in calls
        if isinstance(c.func, ast.Name) and c.func.id == "Extension"
    ]
    assert extensions == [("console.kafka._metadata", ["console/kafka/_metadata.c"])]
    builder, final = stages()[0], final_stage()
    assert ["python", "setup.py", "build_ext", "--inplace"] in run_commands(builder)
    for module, sources in extensions:
        assert all(("COPY", f"{src} /src/{src}") in builder for src in sources)
        package, _, name = module.rpartition(".")
        folder = package.replace(".", "/")
        shipped = ("COPY", f"--from=builder /src/{folder}/{name}.*.so /app/{folder}/")
        assert final.index(shipped) > final.index(("COPY", ". /app"))
        assert any(module in argv[-1] for argv in run_commands(final) if argv[:2] == ["python", "-c"])


def test_it_installs_the_debian_packages_python_ldap_links_against_in_the_final_stage():
    ldap_module = next(Path(sys.prefix).glob("lib/python3.*/site-packages/_ldap*.so"), None)
    if ldap_module is None or shutil.which("dpkg") is None or shutil.which("ldd") is None:
        pytest.skip("needs python-ldap (the ldap extra) built on Debian: `make test` installs both")
    needed = ldap_module.read_bytes()
    packages = set()
    for line in subprocess.run(["ldd", str(ldap_module)], capture_output=True, text=True).stdout.splitlines():
        soname, _, path = (part.strip() for part in line.partition("=>"))
        if path and soname.encode() in needed and soname != "libc.so.6":  # direct NEEDED entries only
            real = os.path.realpath(path.split()[0])  # dpkg knows /usr/lib/..., not the /lib link
            owner = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True).stdout
            packages.add(owner.split(":")[0])
    assert "libldap-2.5-0" in packages
    assert packages <= apt_installed(final_stage())


def test_it_runs_as_a_user_that_is_not_root():
    users = [value for kind, value in final_stage() if kind == "USER"]
    assert users, "no USER: the image would run as root"
    user, _, group = users[-1].partition(":")
    assert user not in ("root", "0") and group not in ("root", "0")
    (created,) = [argv for argv in run_commands(final_stage()) if argv[0] == "useradd"]
    assert user in (created[-1], created[created.index("--uid") + 1])  # the user the image creates
    assert [kind for kind, _ in final_stage()].index("USER") > max(
        i for i, (kind, _) in enumerate(final_stage()) if kind in ("RUN", "COPY")
    ), "everything after USER runs as that user; nothing is installed after it"


def test_it_starts_the_web_server_by_default_with_a_liveness_check():
    (argv,) = service_commands({})
    kind, args = resolve(argv)
    assert kind == "gunicorn" and args.args == ["console.wsgi"] and args.bind == ["0.0.0.0:8000"]
    check = next(value for kind, value in final_stage() if kind == "HEALTHCHECK")
    assert "'http://127.0.0.1:8000/healthz'" in check


# == the compose stack ======================================================================================


def test_it_resolves_every_service_command_to_an_entry_point_of_the_project():
    assert set(app_services()) == {"setup", "web", "worker", "worker-poll", "worker-batch", "beat"}
    resolved = {
        name: [
            (kind, call[0] if kind in ("manage.py", "celery") else "web") for kind, call in map(resolve, cmds)
        ]
        for name, cmds in ((name, service_commands(svc)) for name, svc in app_services().items())
    }
    assert resolved == {
        "setup": [
            ("manage.py", "migrate"),
            ("manage.py", "ensure_admin"),
            ("manage.py", "register_cluster"),
            ("manage.py", "register_cluster"),
        ],
        "web": [("gunicorn", "web")],
        "worker": [("celery", "worker")],
        "worker-poll": [("celery", "worker")],
        "worker-batch": [("celery", "worker")],
        "beat": [("celery", "beat")],
    }
    from tasks.beat import app as beat_app
    from tasks.celery import app

    for name, svc in app_services().items():
        for kind, call in map(resolve, service_commands(svc)):
            if kind == "celery":  # beat runs its own app (the schedule, no Django set-up)
                expected = beat_app if call[0] == "beat" else app
                assert call[2] is expected, f"{name}: -A names another Celery app"


def test_it_refuses_a_command_option_config_or_app_that_does_not_exist():
    from django.core.management import CommandError

    with pytest.raises(AssertionError, match="no command 'register_clusters'"):
        resolve(["python", "manage.py", "register_clusters", "--name", "x"])
    with pytest.raises(CommandError):
        resolve(["python", "manage.py", "register_cluster", "--nmae", "x"])
    with pytest.raises(AssertionError):
        resolve(["gunicorn", "-c", "console/gunicorn.conf.py", "console.wsgi"])
    with pytest.raises(ModuleNotFoundError):
        resolve(["python", "-m", "celery", "-A", "task", "worker", "-Q", "admin"])


def test_it_runs_exactly_one_worker_service_per_queue_and_one_beat(settings):
    assert served_queues() == {"poll": ["worker-poll"], "admin": ["worker"], "batch": ["worker-batch"]}
    assert set(served_queues()) == set(settings.WORKER_QUEUES) == routed_queues(settings)
    beats = [
        name
        for name, svc in app_services().items()
        for kind, call in map(resolve, service_commands(svc))
        if kind == "celery" and call[0] == "beat"
    ]
    assert beats == ["beat"] and SERVICES["beat"].get("deploy", {}).get("replicas", 1) == 1
    # Its schedule file survives a restart: on the var volume.
    (argv,) = service_commands(SERVICES["beat"])
    schedule = PurePosixPath(resolve(argv)[1][1]["schedule"])
    assert any(schedule.is_relative_to(target) for target in named_mounts(SERVICES["beat"]))


def test_it_pings_each_workers_own_node_in_its_healthcheck():
    for name, svc in app_services().items():
        argv = service_commands(svc)[0]
        kind, call = resolve(argv)
        if kind != "celery" or call[0] != "worker":
            continue
        (check,) = healthcheck_commands(svc["healthcheck"])
        inspect = resolve(check)
        assert inspect[0] == "celery" and inspect[1][0] == "inspect", name
        assert check[check.index("ping") + 1 :][:2] == ["-d", f"{call[1]['queues'][0]}@$HOSTNAME"], name
        assert argv[argv.index("-n") + 1] == f"{call[1]['queues'][0]}@%h", name


def image_probe() -> str:
    """The Python the image's HEALTHCHECK runs."""
    check = next(value for kind, value in final_stage() if kind == "HEALTHCHECK")
    argv = yaml.safe_load(check[check.index("CMD ") + 4 :])
    assert argv[:2] == ["python", "-c"], argv
    return argv[2]


def web_probe() -> str:
    """The Python compose's web health check runs."""
    (check,) = healthcheck_commands(SERVICES["web"]["healthcheck"])
    assert check[:2] == ["python", "-c"], check
    return check[2]


def test_it_checks_readiness_on_the_web_service_and_liveness_in_the_image():
    from django.urls import resolve as resolve_url

    assert "'http://127.0.0.1:8000/healthz'" in image_probe()
    assert "'http://127.0.0.1:8000/readyz'" in web_probe()
    assert (resolve_url("/healthz").url_name, resolve_url("/readyz").url_name) == ("healthz", "readyz")
    assert SERVICES["setup"]["healthcheck"] == {"disable": True}  # a one-shot, not a web server


@pytest.fixture
def production_web(tmp_path):
    """The image's default command (gunicorn) on a free port, configured as in production: its own host
    name only, HTTPS on, Redis unreachable (so /readyz is not ready). Yields probe(code) -> (rc, stderr)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (argv,) = service_commands({})
    argv = [str(Path(sys.executable).parent / argv[0]), *argv[1:]]
    argv[argv.index("--bind") + 1] = f"127.0.0.1:{port}"
    env = {
        "PATH": os.environ["PATH"],
        "ALLOWED_HOSTS": "console.example.com",
        "CONSOLE_HTTPS": "1",
        "CONSOLE_VAR_DIR": str(tmp_path),
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "WEB_WORKERS": "1",
    }
    server = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)

        def probe(code: str) -> tuple[int, str]:
            code = code.replace("127.0.0.1:8000/", f"127.0.0.1:{port}/")
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30
            )
            return done.returncode, done.stderr

        yield probe
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_it_probes_a_production_web_server_through_its_allowed_hosts(production_web):
    assert production_web(image_probe()) == (0, "")  # /healthz: alive
    code, stderr = production_web(web_probe())  # /readyz: answered, and not ready without Redis
    assert code == 1 and "HTTP Error 503: Service Unavailable" in stderr, stderr
    # Without the Host header the container's own address is refused before any health view runs.
    code, stderr = production_web(image_probe().replace("headers={'Host': h}", "headers={}"))
    assert code == 1 and "HTTP Error 400: Bad Request" in stderr, stderr


def test_it_shares_the_metrics_files_of_every_container_on_a_tmpfs_volume():
    """Counters are files per process (named by host and pid): web's /metrics adds up every file in the
    directory, so the workers' containers write to the same one; tmpfs, so it empties when all stop."""
    for name, svc in app_services().items():
        directory = svc["environment"]["PROMETHEUS_MULTIPROC_DIR"]
        assert named_mounts(svc)[directory] == ("prometheus", True), name
    assert COMPOSE["volumes"]["prometheus"]["driver_opts"]["type"] == "tmpfs"
    owner = dict(opt.split("=") for opt in COMPOSE["volumes"]["prometheus"]["driver_opts"]["o"].split(","))
    user = [value for kind, value in final_stage() if kind == "USER"][-1]
    assert f"{owner['uid']}:{owner['gid']}" == user  # the image's user writes there


def test_it_connects_every_app_service_to_the_stacks_postgres_and_redis():
    postgres, redis = SERVICES["postgres"], SERVICES["redis"]
    assert postgres["image"].startswith("postgres:") and redis["image"].startswith("redis:")
    for name, svc in app_services().items():
        env = svc["environment"]
        db = dj_database_url.parse(interpolated(env["DATABASE_URL"]))
        assert db["ENGINE"] == "django.db.backends.postgresql", name
        assert (db["HOST"], db["PORT"]) == ("postgres", 5432), name
        assert (db["NAME"], db["USER"]) == (
            postgres["environment"]["POSTGRES_DB"],
            postgres["environment"]["POSTGRES_USER"],
        )
        assert db["PASSWORD"] == interpolated(postgres["environment"]["POSTGRES_PASSWORD"]), name
        assert env["REDIS_URL"] == "redis://redis:6379/0", name
        assert {"postgres", "redis"} - ({"redis"} if name == "setup" else set()) <= set(svc["depends_on"]), (
            name
        )


def test_it_takes_the_keys_and_the_database_password_from_outside_the_compose_file():
    required = re.compile(r"\$\{(\w+):\?[^}]+\}")  # ${NAME:?error}: compose refuses to start without it
    for name, svc in app_services().items():
        for key in KEYS:
            match = required.fullmatch(svc["environment"][key])
            assert match and match[1] == key, f"{name}: {key} is {svc['environment'][key]!r}"
        assert required.search(svc["environment"]["DATABASE_URL"])[1] == "POSTGRES_PASSWORD"
    assert (
        required.fullmatch(SERVICES["postgres"]["environment"]["POSTGRES_PASSWORD"])[1] == "POSTGRES_PASSWORD"
    )
    # Compose reads them from .env, which is neither committed nor copied into the image.
    assert ".env" in (ROOT / ".gitignore").read_text().split()
    assert ".env" in (ROOT / ".dockerignore").read_text().split()


def test_it_gives_the_console_only_variables_it_reads():
    known = project_environment_names()
    for name, svc in app_services().items():
        assert set(svc["environment"]) <= known, f"{name}: {set(svc['environment']) - known}"
        assert svc["environment"]["DEBUG"] == "0"
    assert (
        {"CONSOLE_VAR_DIR", "CONSOLE_AUDIT_ANCHOR_DIR"}
        <= set(image_env())
        <= known
        | {"PATH"}
        | {
            "PYTHONUNBUFFERED",
            "PYTHONDONTWRITEBYTECODE",
            "MALLOC_ARENA_MAX",  # read by glibc's allocator, as console/runner.py sets it for make run
        }
    )


def test_it_keeps_var_and_the_audit_anchors_on_their_own_volumes(settings):
    from tasks.celery import app

    var_dir, anchor_dir = image_env()["CONSOLE_VAR_DIR"], image_env()["CONSOLE_AUDIT_ANCHOR_DIR"]
    anchor_queue = app.amqp.router.route({}, "tasks.audit.write_anchor", (), {})["queue"].name
    writers = served_queues()[anchor_queue]
    for name, svc in app_services().items():
        env, mounts = svc["environment"], named_mounts(svc)
        assert (env["CONSOLE_VAR_DIR"], env["CONSOLE_AUDIT_ANCHOR_DIR"]) == (var_dir, anchor_dir), name
        assert mounts[var_dir] == ("console-var", True), name
        if name != "setup":
            assert mounts[anchor_dir] == ("audit-anchors", name in writers), name
    assert not PurePosixPath(anchor_dir).is_relative_to(var_dir)  # its own volume, its own backups
    assert writers == ["worker"]
    assert named_mounts(SERVICES["postgres"])["/var/lib/postgresql/data"][0] == "postgres"
    assert named_mounts(SERVICES["redis"])["/data"][0] == "redis"
    # The image creates both directories for its user, so a new named volume starts owned by it.
    created = [
        argv
        for argv in run_commands(final_stage())
        if argv[:2] in (["mkdir", "-p"], ["chown", "console:console"])
    ]
    assert all(var_dir in argv and anchor_dir in argv for argv in created) and len(created) == 2
