"""The SCRAM users of a cluster: who has which mechanism, with how many iterations (nothing secret:
Kafka never answers a salt or a key). Admin only, as every SCRAM door."""

from __future__ import annotations

from console import access
from console.clusters.actions import gateway_for
from console.kafka.scram import ScramUser
from console.models import Cluster


def list_users(*, actor, cluster: Cluster) -> tuple[ScramUser, ...]:
    """Every user with a SCRAM credential, by name (one DescribeUserScramCredentials)."""
    access.require(actor, cluster, access.ADMINISTER)
    return gateway_for(cluster).describe_scram_users()


def user_of(*, actor, cluster: Cluster, user: str) -> ScramUser | None:
    """One user's credentials; None when the user has none."""
    access.require(actor, cluster, access.ADMINISTER)
    return current(cluster, user)


def current(cluster: Cluster, user: str) -> ScramUser | None:
    """What Kafka has for ``user`` now (unauthorised: for the actions and the review)."""
    return gateway_for(cluster).describe_scram_user(user)


def as_json(user: ScramUser) -> dict:
    return {
        "user": user.name,
        "credentials": [{"mechanism": c.mechanism, "iterations": c.iterations} for c in user.credentials],
    }
