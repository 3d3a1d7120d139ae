"""Settings of the test identity provider (tests/sso/fixtures.py starts it; nothing here is secret)."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECRET_KEY = "test-identity-provider-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oauth2_provider",
    "provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
# Concurrent token requests (Kafka clients connecting at once) each write a token row: writers wait for
# the lock (timeout) and take it at BEGIN (IMMEDIATE), instead of failing "database is locked" when a
# read transaction tries to turn into a write.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["IDP_DB"],
        "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE"},
    }
}
# A failed request's traceback goes to stderr (the provider's log), not to e-mail.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR"}},
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; test users only

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": os.environ["IDP_RSA_KEY"],
    "PKCE_REQUIRED": True,
    "OAUTH2_VALIDATOR_CLASS": "provider.validator.GroupsValidator",
    "SCOPES": {"openid": "OpenID Connect", "profile": "Profile", "email": "E-mail"},
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    # client credentials get a JWT signed with the key above (provider/tokens.py); other grants as before
    "ACCESS_TOKEN_GENERATOR": "provider.tokens.access_token",
}
