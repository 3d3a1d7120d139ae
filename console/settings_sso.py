"""Single sign-on settings (imported by ``console/settings.py``; docs/sso.md): OpenID Connect and LDAP.

Every value comes from the environment. With neither OIDC_ISSUER nor LDAP_SERVER_URI set, only local
accounts log in. When LDAP_SERVER_URI is set, its group type and the ``ldap`` extra are checked here and
``console/settings.py`` adds the LDAP backend.
"""

from __future__ import annotations

import importlib.util
import os

from django.core.exceptions import ImproperlyConfigured

from console.settings_env import env_bool as _env_bool
from console.settings_env import env_num as _env_num

# OpenID Connect: the authorization code flow with PKCE; endpoints from the issuer's discovery document.
OIDC_ISSUER = os.environ.get("OIDC_ISSUER", "").strip().rstrip("/")
OIDC_DISCOVERY_URL = os.environ.get("OIDC_DISCOVERY_URL", "").strip()  # default: issuer + /.well-known/...
OIDC_CLIENT_ID = os.environ.get("OIDC_CLIENT_ID", "").strip()
OIDC_CLIENT_SECRET = os.environ.get("OIDC_CLIENT_SECRET", "")
OIDC_SCOPES = os.environ.get("OIDC_SCOPES", "openid profile email")
OIDC_GROUPS_CLAIM = os.environ.get("OIDC_GROUPS_CLAIM", "groups")
OIDC_USERNAME_CLAIM = os.environ.get("OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_LABEL = os.environ.get("OIDC_LABEL", "single sign-on")
OIDC_CLOCK_SKEW_S = int(_env_num("OIDC_CLOCK_SKEW_S", 60))
OIDC_TIMEOUT_S = _env_num("OIDC_TIMEOUT_S", 10.0)
OIDC_LOGOUT_AT_PROVIDER = _env_bool("OIDC_LOGOUT_AT_PROVIDER", True)
# LDAP (django-auth-ldap, the optional "ldap" extra): ldap:// with StartTLS, or ldaps://.
LDAP_SERVER_URI = os.environ.get("LDAP_SERVER_URI", "").strip()
LDAP_START_TLS = _env_bool("LDAP_START_TLS", True)
LDAP_CA_CERT_FILE = os.environ.get("LDAP_CA_CERT_FILE", "")
LDAP_BIND_DN = os.environ.get("LDAP_BIND_DN", "")
LDAP_BIND_PASSWORD = os.environ.get("LDAP_BIND_PASSWORD", "")
LDAP_USER_SEARCH_BASE = os.environ.get("LDAP_USER_SEARCH_BASE", "")
LDAP_USER_FILTER = os.environ.get("LDAP_USER_FILTER", "(uid=%(user)s)")  # AD: (sAMAccountName=%(user)s)
LDAP_GROUP_SEARCH_BASE = os.environ.get("LDAP_GROUP_SEARCH_BASE", "")  # empty: no groups from LDAP
LDAP_GROUP_TYPE = os.environ.get("LDAP_GROUP_TYPE", "groupOfNames")  # AD: activeDirectory
# AD: (objectClass=group)
LDAP_GROUP_FILTER = os.environ.get("LDAP_GROUP_FILTER", "(objectClass=groupOfNames)")
LDAP_ATTR_FIRST_NAME = os.environ.get("LDAP_ATTR_FIRST_NAME", "givenName")
LDAP_ATTR_LAST_NAME = os.environ.get("LDAP_ATTR_LAST_NAME", "sn")
LDAP_ATTR_EMAIL = os.environ.get("LDAP_ATTR_EMAIL", "mail")
LDAP_LABEL = os.environ.get("LDAP_LABEL", "directory")
LDAP_TIMEOUT_S = _env_num("LDAP_TIMEOUT_S", 10.0)
LDAP_GROUP_TYPES = (  # console/identity/ldap.py maps each to django-auth-ldap's group type
    "groupOfNames",
    "nestedGroupOfNames",
    "groupOfUniqueNames",
    "posixGroup",
    "activeDirectory",
    "nestedActiveDirectory",
)
if LDAP_SERVER_URI:
    if LDAP_GROUP_TYPE not in LDAP_GROUP_TYPES:
        raise ImproperlyConfigured(f"LDAP_GROUP_TYPE must be one of {', '.join(LDAP_GROUP_TYPES)}")
    if importlib.util.find_spec("django_auth_ldap") is None:
        raise ImproperlyConfigured(
            "LDAP_SERVER_URI is set but django-auth-ldap is not installed: pip install -e '.[ldap]' "
            "(python-ldap needs libldap2-dev, libsasl2-dev and a C compiler; see docs/sso.md)"
        )
