"""The SCRAM users of a cluster: who has which mechanism, with how many iterations (nothing secret:
Kafka never answers a salt or a key). Admin only, as every SCRAM door."""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.clusters.actions import gateway_for
from console.kafka.scram import ScramUser
from console.models import Cluster

PAGE_SIZE = 200  # users per page of the list


@dataclass(frozen=True)
class ScramList:
    """One page of the users with a SCRAM credential, by name; ``total`` counts every user."""

    users: tuple[ScramUser, ...]
    total: int
    page: int = 1
    pages: int = 1
    per_page: int = PAGE_SIZE

    @property
    def count(self) -> int:
        return self.total


def list_users(*, actor, cluster: Cluster) -> tuple[ScramUser, ...]:
    """Every user with a SCRAM credential, by name (one DescribeUserScramCredentials)."""
    access.require(actor, cluster, access.ADMINISTER)
    return gateway_for(cluster).describe_scram_users()


def list_page(*, actor, cluster: Cluster, page: int = 1, per_page: int = PAGE_SIZE) -> ScramList:
    """One page of the users with a SCRAM credential, by name (one DescribeUserScramCredentials; only
    the page's users are built). A page past the last is the last."""
    access.require(actor, cluster, access.ADMINISTER)
    per_page = max(1, per_page)
    gw = gateway_for(cluster)
    found = gw.describe_scram_users_page(max(0, (page - 1) * per_page), per_page)
    pages = max(1, -(-found.total // per_page))
    if page > pages:  # asked past the end (the list shrank): the last page, read again
        page = pages
        found = gw.describe_scram_users_page((page - 1) * per_page, per_page)
    return ScramList(found.users, found.total, max(1, page), pages, per_page)


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
