"""Pure rules of single sign-on: which console groups an identity provider's groups become, and what a
change of groups does to a user's roles. No database, no network."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Console groups that mirror an identity provider's groups carry its prefix; every other group is local
# (managed by hand in Django's admin) and single sign-on never touches it.
PREFIXES = {"oidc": "oidc:", "ldap": "ldap:"}
GROUP_NAME_MAX = 150  # django.contrib.auth's Group.name

# The request attribute where the authentication backends leave why a password login failed; the
# failed-login audit event (console/audit/accounts.py) reads it.
FAILURES_ATTR = "console_login_failures"


class Refused(Exception):
    """A single sign-on login was refused: ``reason`` says why, for the audit and the login page."""

    def __init__(self, reason: str, username: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.username = username


def is_idp_group(name: str) -> bool:
    return name.startswith(tuple(PREFIXES.values()))


def normalize(provider: str, value: str) -> str:
    """One identity-provider group as a console group name. LDAP DNs compare case-insensitively and
    without the blanks after commas, so they are lower-cased and those blanks dropped."""
    value = str(value).strip()
    if provider == "ldap":
        value = ",".join(part.strip() for part in value.split(",")).lower()
    return PREFIXES[provider] + value


@dataclass(frozen=True)
class GroupPlan:
    """What one login changes: console groups to join and to leave, and claim values left out."""

    add: tuple[str, ...]
    remove: tuple[str, ...]
    skipped: tuple[str, ...]  # empty, or longer than a group name may be


def plan_groups(provider: str, idp_groups: Iterable[str], current: Iterable[str]) -> GroupPlan:
    """The provider that authenticated the user is the truth for all of the user's IdP-derived groups:
    groups of this provider the user no longer has, and groups another provider gave, are left."""
    wanted: set[str] = set()
    skipped: list[str] = []
    for value in idp_groups:
        name = normalize(provider, value) if str(value).strip() else ""
        if not name or len(name) > GROUP_NAME_MAX:
            skipped.append(str(value)[:200])
            continue
        wanted.add(name)
    held = {name for name in current if is_idp_group(name)}
    return GroupPlan(
        add=tuple(sorted(wanted - held)), remove=tuple(sorted(held - wanted)), skipped=tuple(skipped)
    )


def role_changes(
    before: Mapping[str, set[str]], after: Mapping[str, set[str]]
) -> dict[str, dict[str, list[str]]]:
    """Per cluster, the roles gained and lost between two {cluster: roles} maps (unchanged ones left out)."""
    changes: dict[str, dict[str, list[str]]] = {}
    for cluster in sorted(set(before) | set(after)):
        gained = sorted(after.get(cluster, set()) - before.get(cluster, set()))
        lost = sorted(before.get(cluster, set()) - after.get(cluster, set()))
        if gained or lost:
            changes[cluster] = {"gained": gained, "lost": lost}
    return changes


def groups_claim(claims: Mapping, claim: str) -> list[str]:
    """The groups an ID token or userinfo carries: a list of strings, or one string; a dotted claim
    name reaches into nested objects (Keycloak's ``realm_access.roles``)."""
    value: object = claims
    for part in claim.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value if isinstance(v, str | int)]
    return []
