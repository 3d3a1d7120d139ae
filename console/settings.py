"""Settings, all read from the environment. Limits and tunables live here, nowhere else."""

from __future__ import annotations

import ipaddress
import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from console.settings_env import env_bool as _env_bool
from console.settings_env import env_list as _env_list
from console.settings_env import env_num as _env_num

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CONSOLE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


DEBUG = _env_bool("DEBUG", False)


def _local_secret(name: str, make=lambda: secrets.token_urlsafe(48)) -> str:
    """A random secret kept in var/ (mode 600) so a machine without the env var still has a stable
    one. Created atomically: processes starting together (web, worker, beat) all read the same."""
    path = VAR_DIR / name
    if not path.exists():
        tmp = path.with_name(f".{name}.{os.getpid()}")
        tmp.write_text(make())
        tmp.chmod(0o600)
        try:
            os.link(tmp, path)  # fails if another process created it first; theirs wins
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    return path.read_text().strip()


SECRET_KEY = os.environ.get("SECRET_KEY") or _local_secret("secret_key")


def _fernet_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


# Fernet keys (urlsafe base64, 32 bytes) for secrets at rest, independent of SECRET_KEY. A comma-separated
# list: the first encrypts, every one decrypts (rotation: put the new key first, run `rotate_secrets`,
# then drop the old one). Without the variable, `make run` keeps one in var/encryption_key.
CONSOLE_ENCRYPTION_KEYS = _env_list("CONSOLE_ENCRYPTION_KEY", "") or [
    _local_secret("encryption_key", _fernet_key)
]

# Key of the audit chain's HMAC, never stored in the database. Without the variable, `make run` keeps
# one in var/audit_hmac_key. Changing it makes every existing event fail verification.
AUDIT_HMAC_KEY = os.environ.get("AUDIT_HMAC_KEY") or _local_secret("audit_hmac_key")

ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "csp",
    "axes",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "console.middleware.ExplainedErrorsMiddleware",
    "console.middleware.RefusedPostsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.navigation",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'console.sqlite3'}"), conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server read while a worker writes; the pragmas run on every new connection.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
        f"PRAGMA busy_timeout={int(os.environ.get('SQLITE_BUSY_TIMEOUT_MS', '10000'))};",
        "transaction_mode": "IMMEDIATE",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes first: it refuses a locked-out login before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "console.identity.backends.LocalBackend",  # Django's ModelBackend, switchable off (see SSO below)
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# The console's own cookie names: another Django app on the same host name (an identity provider on
# another port: browsers keep cookies per host, not per port) never overwrites them (docs/try.md).
SESSION_COOKIE_NAME = "kconsole_sessionid"
CSRF_COOKIE_NAME = "kconsole_csrftoken"
LANGUAGE_COOKIE_NAME = "kconsole_language"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Sessions end after CONSOLE_SESSION_TIMEOUT_S (default 8 h) and when the browser closes.
SESSION_COOKIE_AGE = int(os.environ.get("CONSOLE_SESSION_TIMEOUT_S", str(8 * 3600)))
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
SESSION_COOKIE_SAMESITE = "Lax"

# Behind HTTPS (production; see docs/production.env): secure cookies, redirect to HTTPS, HSTS.
CONSOLE_HTTPS = _env_bool("CONSOLE_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = CONSOLE_HTTPS
SECURE_SSL_REDIRECT = _env_bool("CONSOLE_SSL_REDIRECT", CONSOLE_HTTPS)
SECURE_HSTS_SECONDS = int(os.environ.get("CONSOLE_HSTS_SECONDS", "31536000" if CONSOLE_HTTPS else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("CONSOLE_HSTS_INCLUDE_SUBDOMAINS", CONSOLE_HTTPS)
SECURE_HSTS_PRELOAD = _env_bool("CONSOLE_HSTS_PRELOAD", False)
if _env_bool("CONSOLE_BEHIND_PROXY", False):
    # Only behind a proxy that sets X-Forwarded-Proto itself (and strips it from clients).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content security policy (django-csp): scripts, styles and everything else from this origin only.
# Progress bars set their width in a style attribute, hence style-src-attr; no inline <style>/<script>.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],  # fallback for browsers without the two below
        "style-src-elem": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failures for a user name from one
# address, that pair is locked out for AXES_COOLOFF_MINUTES (HTTP 429); a success resets the count.
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("AXES_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "console.api.errors.lockout"  # templates/console/locked_out.html, JSON on /api/
AXES_VERBOSE = False
# Behind the proxy: the client's address as its CONSOLE_PROXY_COUNT proxies append it to X-Forwarded-For
# (django-ipware, strict: another chain counts against the proxy's address). docs/production.env.
if _env_bool("CONSOLE_BEHIND_PROXY", False):
    AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR")
    AXES_IPWARE_PROXY_COUNT = max(int(os.environ.get("CONSOLE_PROXY_COUNT", "1")) - 1, 0)  # 1st: REMOTE_ADDR

# Redis, the Celery broker and the queues split by latency (poll / admin / batch).
from console.settings_celery import *  # noqa: E402, F403

# Kafka client behaviour.
KAFKA_REQUEST_TIMEOUT_S = float(os.environ.get("KAFKA_REQUEST_TIMEOUT_S", "10"))
KAFKA_CONNECT_TIMEOUT_S = float(os.environ.get("KAFKA_CONNECT_TIMEOUT_S", "5"))

# Operations: a running operation whose heartbeat is older than this is re-queued by beat.
OPERATION_STALE_AFTER_S = int(os.environ.get("OPERATION_STALE_AFTER_S", "60"))
OPERATION_RECOVERY_INTERVAL_S = int(os.environ.get("OPERATION_RECOVERY_INTERVAL_S", "30"))
# A step that fails (or whose worker dies) this many times in a row ends the operation "errored".
OPERATION_MAX_ATTEMPTS = int(os.environ.get("OPERATION_MAX_ATTEMPTS", "5"))
# Backoff before retry n: OPERATION_BACKOFF_S * 2**(n-1), at most OPERATION_BACKOFF_MAX_S.
OPERATION_BACKOFF_S = float(os.environ.get("OPERATION_BACKOFF_S", "2"))
OPERATION_BACKOFF_MAX_S = float(os.environ.get("OPERATION_BACKOFF_MAX_S", "300"))
# A step watching Kafka's own work (a move) that cannot reach Kafka waits in "lost contact" (no
# attempt spent): retry n after OPERATION_LOST_CONTACT_BACKOFF_S * 2**(n-1), at most the max.
OPERATION_LOST_CONTACT_BACKOFF_S = float(os.environ.get("OPERATION_LOST_CONTACT_BACKOFF_S", "2"))
OPERATION_LOST_CONTACT_BACKOFF_MAX_S = float(os.environ.get("OPERATION_LOST_CONTACT_BACKOFF_MAX_S", "30"))
# How the runner hands an operation id to a worker; the console itself never imports Celery.
OPERATION_DISPATCHER = os.environ.get("OPERATION_DISPATCHER", "tasks.operations.enqueue")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"kafka": {"level": "WARNING"}},
}


# Limits and tunables of each area (one place; every one can be overridden from the environment).
TOPIC_METADATA_CACHE_S = _env_num("TOPIC_METADATA_CACHE_S", 30.0)
# At most this many clusters' snapshots kept per process (the least recently used one goes first);
# an expired snapshot is dropped at the next read of any (console/topics/cache.py).
TOPIC_METADATA_CACHE_CLUSTERS = int(_env_num("TOPIC_METADATA_CACHE_CLUSTERS", 8))
# One whole-cluster metadata copy per host: a process that reads Kafka writes it under var/metadata/
# and the others map it while it is fresh (0: every process reads Kafka itself).
TOPIC_METADATA_HOST_SHARED = bool(_env_num("TOPIC_METADATA_HOST_SHARED", 1))
# A cluster's Kafka clients (a network thread, librdkafka's threads, their buffers) are closed in a
# process once no call used them for this long; the next call opens them again.
KAFKA_CLIENT_IDLE_S = _env_num("KAFKA_CLIENT_IDLE_S", 600.0)
# At most this many clusters' Kafka clients open per process: opening one more closes the least
# recently used idle one's (never one with a call in progress), so threads stay bounded.
KAFKA_CLIENTS_MAX = int(_env_num("KAFKA_CLIENTS_MAX", 8))
TOPIC_CONFIG_CACHE_S = _env_num("TOPIC_CONFIG_CACHE_S", 60.0)
# Kafka answers a config change once its controller has committed it; brokers apply it from the metadata
# log a little later. A change re-reads (every INTERVAL) until every broker shows it, for at most TIMEOUT;
# past that the audit records the requested value marked "confirmed": false (console/configs/actions.py).
CONFIG_CONFIRM_TIMEOUT_S = _env_num("CONFIG_CONFIRM_TIMEOUT_S", 5.0)
CONFIG_CONFIRM_INTERVAL_S = _env_num("CONFIG_CONFIRM_INTERVAL_S", 0.2)
TOPIC_POLICY_MAX_PARTITIONS = _env_num("TOPIC_POLICY_MAX_PARTITIONS", 10_000)
TOPIC_POLICY_MAX_BATCH_SIZE = _env_num("TOPIC_POLICY_MAX_BATCH_SIZE", 5_000)
ACL_BATCH_MAX = _env_num("ACL_BATCH_MAX", 1000)
ACL_BATCH_TEXT_MAX = _env_num("ACL_BATCH_TEXT_MAX", 512 * 1024)
# Any uploaded or pasted YAML/JSON/CSV (topic batches, ACL batches, plans), in UTF-8 bytes.
UPLOAD_MAX_BYTES = _env_num("UPLOAD_MAX_BYTES", 2 * 1024 * 1024)
AUDIT_PAGE_SIZE = _env_num("AUDIT_PAGE_SIZE", 50)
AUDIT_EXPORT_CHUNK = _env_num("AUDIT_EXPORT_CHUNK", 2000)
AUDIT_SCAN_WINDOW = _env_num("AUDIT_SCAN_WINDOW", 50_000)
# A change whose outcome event could not be written (database unavailable) is settled by the
# reconciler this long after its "requested" event: first as "unknown", then with Kafka's re-read state.
AUDIT_OUTCOME_GRACE_S = _env_num("AUDIT_OUTCOME_GRACE_S", 120.0)
# Audit anchors (console/audit/anchor.py): beat appends the checked chain's head, signed with
# AUDIT_HMAC_KEY, to DIR/anchors.jsonl every EVERY_S seconds (only when it moved; dir 0700, file 0600,
# append-only). Every chain check compares the chain with the latest line, so deleting the newest events
# is caught. Production: a directory the database's users cannot reach, shipped off the host or made
# append-only (chattr +a); the worker must be able to write it. Default: var/audit-anchors.
CONSOLE_AUDIT_ANCHOR_DIR = os.environ.get("CONSOLE_AUDIT_ANCHOR_DIR") or str(VAR_DIR / "audit-anchors")
CONSOLE_AUDIT_ANCHOR_EVERY_S = _env_num("CONSOLE_AUDIT_ANCHOR_EVERY_S", 3600.0)
if not CONSOLE_AUDIT_ANCHOR_EVERY_S >= 60:  # beat would anchor (and walk the whole chain) without pause
    raise ImproperlyConfigured(
        f"CONSOLE_AUDIT_ANCHOR_EVERY_S must be at least 60, not {CONSOLE_AUDIT_ANCHOR_EVERY_S}"
    )
REQUESTS_EMAIL_FROM = os.environ.get("REQUESTS_EMAIL_FROM", "")  # empty: no e-mail notifications
# Change control: an approval of a held operator action counts for this long (console/changes).
APPROVAL_TTL_H = float(os.environ.get("APPROVAL_TTL_H", "24"))
# Change windows (console/windows, console/changes/schedule.py): beat's tick that starts scheduled changes
# (a change runs at its time, at most this late), and how far ahead one may be scheduled or wait.
WINDOWS_TICK_S = _env_num("WINDOWS_TICK_S", 30.0)
SCHEDULE_HORIZON_DAYS = _env_num("SCHEDULE_HORIZON_DAYS", 90)
# Health alerts (console/alerts): beat's evaluation round; each cluster's evaluation is bounded (then
# the cluster is "unreachable"), ALERTS_THREADS clusters at once on the poll worker beside its tick;
# topic configs (min ISR, throttles) and the capacity forecast are read again after ..._MAX_AGE_S.
ALERTS_EVAL_INTERVAL_S = _env_num("ALERTS_EVAL_INTERVAL_S", 60.0)
ALERTS_CLUSTER_TIMEOUT_S = _env_num("ALERTS_CLUSTER_TIMEOUT_S", 20.0)
ALERTS_THREADS = max(1, int(_env_num("ALERTS_THREADS", 8)))
ALERTS_CONFIGS_MAX_AGE_S = _env_num("ALERTS_CONFIGS_MAX_AGE_S", 600.0)
ALERTS_CONTROLLER_WINDOW_S = _env_num("ALERTS_CONTROLLER_WINDOW_S", 600.0)  # controller changes counted over
QUORUM_LAG_WARN_RECORDS = _env_num("QUORUM_LAG_WARN_RECORDS", 100)
QUORUM_CAUGHT_UP_WARN_MS = _env_num("QUORUM_CAUGHT_UP_WARN_MS", 5000)
QUORUM_REFRESH_S = _env_num("QUORUM_REFRESH_S", 3)
GROUPS_REFRESH_S = _env_num("GROUPS_REFRESH_S", 5)  # a group page's live lag refresh
REASSIGN_MIN_THROTTLE_BYTES_PER_S = _env_num("REASSIGN_MIN_THROTTLE_BYTES_PER_S", 1024)
REASSIGN_MAX_THROTTLE_BYTES_PER_S = _env_num("REASSIGN_MAX_THROTTLE_BYTES_PER_S", 10 * 1024**3)
REASSIGN_JANITOR_GRACE_S = _env_num("REASSIGN_JANITOR_GRACE_S", 30)
REASSIGN_SUBMIT_BATCH = _env_num("REASSIGN_SUBMIT_BATCH", 1000)
# The progress page's copy rate is averaged over this many seconds (at least 30)
REASSIGN_RATE_WINDOW_S = _env_num("REASSIGN_RATE_WINDOW_S", 30)
# Cross-cluster search (console/fleet/search.py): at most CAP names shown per cluster and kind (the rest
# counted), clusters past BUDGET_S seconds of one search are listed as not searched; the names of at most
# CACHED_FILES (cluster, dataset) snapshot files are kept per process (console/telemetry/names.py).
FLEET_SEARCH_CAP = int(_env_num("FLEET_SEARCH_CAP", 20))
FLEET_SEARCH_BUDGET_S = _env_num("FLEET_SEARCH_BUDGET_S", 3.0)
FLEET_SEARCH_CACHED_FILES = int(_env_num("FLEET_SEARCH_CACHED_FILES", 200))

EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
# Pasted reassignment plans and batch files can be large.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(_env_num("DATA_UPLOAD_MAX_MEMORY_SIZE", 25 * 1024 * 1024))


# Single sign-on (docs/sso.md). With none of OIDC_ISSUER / LDAP_SERVER_URI set, only local accounts
# log in, as before. Local accounts: "all", "superusers" (break-glass admins only) or "off".
CONSOLE_LOCAL_LOGIN = os.environ.get("CONSOLE_LOCAL_LOGIN", "all").strip().lower()
# Every session ends this long after its login, however active (the next login reads the identity
# provider's groups again). At most the session cookie's age.
CONSOLE_SESSION_MAX_AGE_S = min(
    int(_env_num("CONSOLE_SESSION_MAX_AGE_S", SESSION_COOKIE_AGE)), SESSION_COOKIE_AGE
)
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
    "console.identity.sessions.SessionAgeMiddleware",
)
# OpenID Connect and LDAP (console/settings_sso.py).
from console.settings_sso import *  # noqa: E402, F403
from console.settings_sso import LDAP_SERVER_URI  # noqa: E402

if CONSOLE_LOCAL_LOGIN not in ("all", "superusers", "off"):
    raise ImproperlyConfigured(
        f"CONSOLE_LOCAL_LOGIN must be all, superusers or off, not {CONSOLE_LOCAL_LOGIN!r}"
    )
if LDAP_SERVER_URI:  # checked in settings_sso
    AUTHENTICATION_BACKENDS.append("console.identity.ldap.DirectoryBackend")
# Always listed, so an OIDC session ends (rather than errors) when OIDC is switched off.
AUTHENTICATION_BACKENDS.append("console.identity.backends.OIDCBackend")


# REST API (docs/api.md): Django REST framework with bearer API tokens or the session (with CSRF),
# JSON only, errors shaped by console.api.errors, the OpenAPI 3 schema by drf-spectacular.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "console.api.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["console.api.auth.ApiAccess"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "console.api.errors.handle",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # ASCII JSON: text echoed from a request (a lone surrogate in a name) can always be encoded.
    "UNICODE_JSON": False,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Kafka Operator Console API",
    "DESCRIPTION": "The console's REST API: the same actions, permissions, policy and audit as the pages. "
    "See docs/api.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from the drf-spectacular-sidecar package, served by this server (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "console.api.schema.idempotency_header",
    ],
}
API_PAGE_SIZE = int(_env_num("API_PAGE_SIZE", 50))
API_MAX_PAGE_SIZE = int(_env_num("API_MAX_PAGE_SIZE", 500))
API_TOKEN_MAX_DAYS = int(_env_num("API_TOKEN_MAX_DAYS", 365))
# A single sign-on user's tokens work while their groups were read at a login this recent (docs/sso.md).
API_TOKEN_SSO_MAX_AGE_S = int(_env_num("API_TOKEN_SSO_MAX_AGE_S", CONSOLE_SESSION_MAX_AGE_S))
API_IDEMPOTENCY_TTL_S = int(_env_num("API_IDEMPOTENCY_TTL_S", 24 * 3600))
NOTIFY_DISPATCHER = os.environ.get("NOTIFY_DISPATCHER", "tasks.notify.enqueue")  # console/notify's queue
NOTIFY_MAX_ATTEMPTS = int(_env_num("NOTIFY_MAX_ATTEMPTS", 5))  # then the delivery is "failed"
NOTIFY_BACKOFF_S = _env_num("NOTIFY_BACKOFF_S", 10.0)  # before retry n: NOTIFY_BACKOFF_S * 2**(n-1) ...
NOTIFY_BACKOFF_MAX_S = _env_num("NOTIFY_BACKOFF_MAX_S", 600.0)  # ... at most this
NOTIFY_TIMEOUT_S = _env_num("NOTIFY_TIMEOUT_S", 10.0)  # an HTTP connect or read, an SMTP session
NOTIFY_EMAIL_FROM = os.environ.get("NOTIFY_EMAIL_FROM", REQUESTS_EMAIL_FROM or "kafka-console@localhost")
# Where notifications may go (console/notify/egress.py): webhooks only to public addresses, plus these
# networks (CIDRs, e.g. "10.20.0.0/16"; empty: no internal address); e-mail only to these domains
# (ALLOWED_HOSTS syntax: "example.com", ".example.com" with its subdomains, "*" any; empty: no e-mail).
NOTIFY_ALLOWED_NETWORKS = _env_list("NOTIFY_ALLOWED_NETWORKS", "")
NOTIFY_EMAIL_DOMAINS = _env_list("NOTIFY_EMAIL_DOMAINS", "")
CONSOLE_BASE_URL = os.environ.get("CONSOLE_BASE_URL", "").rstrip("/")  # makes notification links absolute

# Health and metrics (console/health, docs/operations-health.md). /healthz is open; /readyz and /metrics
# answer `Authorization: Bearer <CONSOLE_METRICS_TOKEN>` or a client inside CONSOLE_METRICS_ALLOWED_NETWORKS.
CONSOLE_METRICS_TOKEN = os.environ.get("CONSOLE_METRICS_TOKEN", "")
CONSOLE_METRICS_ALLOWED_NETWORKS = _env_list("CONSOLE_METRICS_ALLOWED_NETWORKS", "127.0.0.1/32,::1/128")
for _net in CONSOLE_METRICS_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_net, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"CONSOLE_METRICS_ALLOWED_NETWORKS: {_net!r} is not a network") from None
HEALTH_WORKER_TIMEOUT_S = _env_num("HEALTH_WORKER_TIMEOUT_S", 1.0)  # /readyz waits this long for workers
HEALTH_TICK_STALE_S = _env_num("HEALTH_TICK_STALE_S", 30.0)  # beat ticks every second
HEALTH_CELERY_APP = "tasks.celery.app"  # asked which workers consume which queue
# Counters of every process of a host (gunicorn's workers, Celery's) add up through files in this directory.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(VAR_DIR / "prometheus"))
Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
MIDDLEWARE.insert(0, "django_prometheus.middleware.PrometheusBeforeMiddleware")
MIDDLEWARE.insert(
    MIDDLEWARE.index("axes.middleware.AxesMiddleware"),
    "django_prometheus.middleware.PrometheusAfterMiddleware",
)
SECURE_REDIRECT_EXEMPT = [r"^(healthz|readyz|metrics)$"]  # load balancers probe the backends over HTTP
LOGGING["loggers"]["health_check"] = {"level": "ERROR"}  # /readyz names a failing check; no log per probe
