"""Protocol handlers, one module per API family.

This is the one place that lists them: importing the package imports every handler module, and each
registers its APIs with the registry (``sandbox.apis``) through ``@api``. The server imports it
before it builds a node's API table. Handler modules import the registry, the state and the
modules of rules they use, never the server or the cluster (``RequestContext`` carries what they
need). ``metacache`` and ``coordinator`` hold rules shared by handlers, and ``offset_answers``
writes OffsetFetch's many-group answers as bytes; they serve no API.
"""

from __future__ import annotations

from sandbox.handlers import (
    acls,
    cluster,
    configs,
    consumer,
    data,
    groups,
    kraft,
    logdirs,
    membership,
    meta,
    quotas,
    reassign,
    records,
    sasl,
    scram,
    share,
    topic_partitions,
    topics,
    txn,
)

__all__ = [
    "acls",
    "cluster",
    "configs",
    "consumer",
    "data",
    "groups",
    "kraft",
    "logdirs",
    "membership",
    "meta",
    "quotas",
    "reassign",
    "records",
    "sasl",
    "scram",
    "share",
    "topic_partitions",
    "topics",
    "txn",
]
