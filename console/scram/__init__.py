"""SCRAM users (KIP-554): which users have SCRAM-SHA-256/512 credentials, and setting (create or
rotate) or deleting one - the console's replacement for ``kafka-configs.sh --alter --add-config
'SCRAM-SHA-512=[...]' --entity-type users``, admin only, held by change control, audited.

``core`` (pure: the user name, mechanism, iterations and password checked; the password is never
put in a message), ``reads`` (the users with their mechanisms and iterations), ``actions`` (set,
delete: authorised, gated by ``scram.alter``, audited without the password), ``held`` (the policy kind
and its held kind; a held set keeps the password encrypted), ``audit_names`` (its action names).
"""

__all__ = ["actions", "audit_names", "core", "held", "reads"]
