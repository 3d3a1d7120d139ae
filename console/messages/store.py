"""How the area's rows are read and described: data grants and masking rules as the audit trail and
the doors show them, and the rules in force for a topic, compiled."""

from __future__ import annotations

from console.messages import masking
from console.messages.core import BrowseInvalid
from console.models import Cluster, DataGrant, MaskingRule


def describe_grant(grant: DataGrant) -> dict:
    """A grant as the audit trail and the doors show it."""
    return {
        "id": grant.pk,
        "subject": f"user:{grant.user.username}" if grant.user_id else f"group:{grant.group.name}",
        "prefix": grant.prefix,
        "read": grant.read,
        "write": grant.write,
        "unmasked": grant.unmasked,
    }


def describe_rule(rule: MaskingRule) -> dict:
    """A masking rule as the audit trail and the doors show it."""
    return {
        "id": rule.pk,
        "prefix": rule.prefix,
        "kind": rule.kind,
        "expression": rule.expression,
        "note": rule.note,
        "label": masking.Rule(rule.kind, rule.expression, rule.prefix).label,
    }


def grants_of(cluster: Cluster) -> list[dict]:
    """The cluster's data grants, described (by prefix)."""
    return [
        describe_grant(g) for g in DataGrant.objects.filter(cluster=cluster).select_related("user", "group")
    ]


def rules_of(cluster: Cluster) -> list[dict]:
    """The cluster's masking rules, described (by prefix)."""
    return [describe_rule(r) for r in MaskingRule.objects.filter(cluster=cluster)]


def rules_in_force(cluster: Cluster, topic: str) -> tuple[masking.Rule, ...]:
    """The masking rules that apply to a topic, compiled. A stored rule was checked when it was added;
    one that no longer compiles (written some other way) refuses the read: nothing is shown unmasked."""
    stored = MaskingRule.objects.filter(cluster=cluster).order_by("prefix", "id")
    rules = []
    for row in stored:
        if not topic.startswith(row.prefix):
            continue
        try:
            rules.append(masking.make_rule(row.kind, row.expression, row.prefix))
        except masking.RuleInvalid as exc:
            raise BrowseInvalid(
                f"masking rule {row.pk} of topic prefix '{row.prefix}' cannot be applied ({exc}), so nothing "
                "is shown: a cluster admin must remove or replace it"
            ) from None
    return tuple(rules)
