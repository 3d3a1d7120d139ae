"""Issue 32 item 6: docs/production.md and docs/production.env name only settings, manage.py commands
and compose services that exist (the names are read from the page's code with markdown-it-py)."""

from __future__ import annotations

import ast
import re

from markdown_it import MarkdownIt

from tests.unit.test_deploy_stack import KEYS, ROOT, SERVICES, SETTINGS_MODULES, environment_names

NOT_SETTINGS = {"POSTGRES_PASSWORD"}  # the compose stack's database password (docker-compose.yml)
PRODUCTION_MD, PRODUCTION_ENV = ROOT / "docs" / "production.md", ROOT / "docs" / "production.env"


def documented_names(markdown: str, env: str) -> set[str]:
    """SETTING-like names in a page's code (spans and blocks) and an env file's lines, commented ones too."""
    name = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
    names = set()
    for token in MarkdownIt().parse(markdown):
        for child in [token, *(token.children or [])]:
            if child.type in ("code_inline", "fence", "code_block"):
                names |= set(name.findall(child.content))
    for line in env.splitlines():
        assignment = re.match(r"#?\s*([A-Z][A-Z0-9_]+)=", line)
        if assignment:
            names.add(assignment[1])
    return names


def settings_names() -> set[str]:
    """What console/settings.py defines (assigned names, its star-imported Celery settings included) and
    the environment variables it reads."""
    assigned = {
        target.id
        for module in SETTINGS_MODULES
        for node in ast.walk(ast.parse((ROOT / module).read_text()))
        if isinstance(node, ast.Assign)
        for each in node.targets
        for target in ([each] if isinstance(each, ast.Name) else getattr(each, "elts", []))
        if isinstance(target, ast.Name) and target.id.isupper()
    }
    return assigned | environment_names(*SETTINGS_MODULES)


def test_it_names_only_settings_that_exist_in_the_production_docs():
    names = documented_names(PRODUCTION_MD.read_text(), PRODUCTION_ENV.read_text())
    unknown = names - NOT_SETTINGS - settings_names()
    assert not unknown, f"not in console/settings.py: {sorted(unknown)}"
    assert NOT_SETTINGS <= set(re.findall(r"\$\{(\w+)", (ROOT / "docker-compose.yml").read_text()))
    # The page covers what the issue asks of it, by the settings' own names.
    for expected in (
        "SECURE_PROXY_SSL_HEADER",
        "AXES_IPWARE_PROXY_COUNT",
        "CONSOLE_HTTPS",
        "CONSOLE_BEHIND_PROXY",
        "DATABASE_URL",
        "REDIS_URL",
        "CONSOLE_AUDIT_ANCHOR_DIR",
        *KEYS,
    ):
        assert expected in names, expected


def test_it_catches_a_documented_name_that_is_not_a_setting():
    page = "Keep `CONSOLE_AUDIT_ANCHORS_DIR` off the host.\n\n```\nSECURE_PROXY_SSL_HEADER = ...\n```\n"
    names = documented_names(page, "# CONSOLE_PROXY_KOUNT=1\nCONSOLE_HTTPS=1\n")
    assert names == {
        "CONSOLE_AUDIT_ANCHORS_DIR",
        "SECURE_PROXY_SSL_HEADER",
        "CONSOLE_PROXY_KOUNT",
        "CONSOLE_HTTPS",
    }
    assert names - settings_names() == {"CONSOLE_AUDIT_ANCHORS_DIR", "CONSOLE_PROXY_KOUNT"}


def compose_services_named(markdown: str) -> set[str]:
    """The services a page's `docker compose <stop|up|exec|run|logs> ...` lines name."""
    named = set()
    for sub, rest in re.findall(r"docker compose (stop|up|exec|run|logs)((?: +[-\w=]+)*)", markdown):
        words, skip = [], False
        for word in rest.split():
            if skip:
                skip = False
            elif word in ("-t", "--timeout", "--scale"):
                skip = True
            elif not word.startswith("-"):
                words.append(word)
        named |= set(words[:1] if sub in ("exec", "run") else words)
    return named


def test_it_names_only_commands_and_services_that_exist_in_the_production_docs():
    from django.core.management import get_commands

    page = PRODUCTION_MD.read_text()
    commands = set(re.findall(r"manage\.py (\w+)", page))
    assert commands >= {"rotate_secrets", "audit_anchor", "audit_verify", "migrate"}
    assert commands <= set(get_commands()), commands - set(get_commands())
    services = compose_services_named(page)
    assert services >= {"worker", "worker-poll", "worker-batch", "beat", "web", "setup", "postgres"}
    assert services <= set(SERVICES), services - set(SERVICES)
    assert compose_services_named("`docker compose stop -t 300 worker wroker-poll`") == {
        "worker",
        "wroker-poll",
    }
