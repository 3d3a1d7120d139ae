"""Messages: browse a topic's messages and produce one, masked and audited, under data grants.

``core`` (pure): the limits (MAX_MESSAGES, MAX_BYTES, TIME_LIMIT_S), ``BrowseQuery``, ``ShownMessage``,
``BrowseResult``, ``BrowseInvalid`` (bad input: 400), decoding, filters. ``masking`` (pure): masking
rules checked (``make_rule``: RuleInvalid) and applied. ``grants``: DATA_READ / DATA_WRITE from
``DataGrant`` rows only (``require``, ``can``, ``visible``, ``writable``, ``may_unmask``).
``jsondoc``: JSON values parsed once, written pretty, JSON paths (plain ones walked directly).
``store``: grants and rules described (``grants_of``, ``rules_of``, ``rules_in_force``).
``audit_names``: the area's audit actions.

``reads``:
- ``browse(*, actor, cluster, topic, query: core.BrowseQuery, source_ip=None) -> core.BrowseResult``
  (PermissionDenied without data.read, or for an unmasked read without a grant with ``unmasked`` and
  a reason - audited "refused"; BrowseInvalid for bad input; AuditUnavailable when the read cannot be
  audited: nothing is shown)
- ``data_access(*, actor, cluster) -> (grants, rules)``: lists of dicts (``store.describe_grant`` /
  ``describe_rule``: id, subject, prefix, read, write, unmasked / id, prefix, kind, expression, note,
  label), for the cluster's admins

``actions`` (the mutations; all keyword-only, ``source_ip=None`` last):
- ``produce(*, actor, cluster, topic, partition, key, value, headers=()) -> console.kafka.ProducedRecord``
  (key, value: str, bytes or None; headers: (name, str/bytes/None) pairs; partition None: the default
  partitioner; needs data.write; ValidationError for bad input, KafkaOperationError from Kafka)
- ``grant(*, actor, cluster, user=None, group=None, prefix="", read=True, write=False, unmasked=False)
  -> DataGrant`` (user / group: an object or a name; ValidationError for a bad or duplicate grant)
- ``revoke(*, actor, cluster, grant_id)`` (Http404 when the cluster has no such grant)
- ``add_rule(*, actor, cluster, kind, expression, prefix="", note="") -> MaskingRule`` (kind in
  "json_path", "header", "regex"; ValidationError saying why a rule cannot apply)
- ``remove_rule(*, actor, cluster, rule_id)``
All four need ``access.ADMINISTER`` on the cluster and are audited (a refusal too).
"""

__all__ = ["actions", "audit_names", "core", "grants", "jsondoc", "masking", "reads", "store"]
