"""Single sign-on: OpenID Connect and LDAP logins, identity-provider groups mirrored into console groups
(so group role bindings apply), local accounts for break-glass admins (switchable off).

``core`` holds the pure rules (group names, membership plans, role differences); ``oidc`` the code flow
through Authlib; ``ldap`` django-auth-ldap's backend (imported only when LDAP is configured);
``backends`` the local and OIDC session backends; ``users`` the identity links; ``groups`` the group
recompute and its audit; ``actions`` the OIDC login verbs; ``sessions`` the bounded session age;
``methods`` what the login page offers and the login rules API tokens follow; ``tokens`` the API
tokens (create, revoke, authenticate; audited), used by the API's authentication and the tokens page.
The system actor and the reserved user names every login refuses are ``console/system_actor.py``
(shared with ``access``).
"""

__all__ = ["actions", "backends", "core", "groups", "methods", "oidc", "sessions", "tokens", "users"]
