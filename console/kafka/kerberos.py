"""SASL/GSSAPI (Kerberos) for kafka-python, with per-connection credentials from a keytab.

Needs python ``gssapi`` (the "kerberos" extra; it builds against MIT krb5: libkrb5-dev, gcc).
librdkafka's PyPI build has no GSSAPI, so a GSSAPI connection goes through kafka-python only.

Credentials: each :class:`KerberosLogin` keeps its keytab in a mode-0600 file in its own private
0700 directory (MIT krb5 reopens a FILE keytab whenever it needs a new ticket, so the file lives
as long as the login: it is removed when the gateway closes and at process exit) and asks for
initiator credentials with ``gssapi.Credentials(store={'client_keytab': ..., 'ccache':
'MEMORY:<unique>'})``, so tickets stay in this process's memory and never touch the default ccache.

Realms: KRB5_CONFIG is one per process, and MIT krb5 reads every file it lists (``a:b:c``; a
relation in an earlier file wins). A login with its own krb5.conf text writes it next to its
keytab and puts that file in front of the list; the original KRB5_CONFIG (or /etc/krb5.conf) stays
last. Two clusters in different realms therefore work in one process as long as each principal
names its realm (``console@A.ORG``) and each cluster's krb5.conf names its realm's KDCs (and
``[domain_realm]`` for its brokers' hosts); only ``[libdefaults]`` settings are shared, the first
file's winning.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import tempfile
import threading
import time
import uuid
from typing import Any

from .errors import KafkaOperationError
from .sasl import KerberosSettings

__all__ = ["KerberosLogin", "available", "login_for", "require", "kerberos_error", "register_mechanism"]

_RENEW_BEFORE_S = 60.0


def available() -> bool:
    """True when python gssapi (the "kerberos" extra) can be imported."""
    try:
        importlib.import_module("gssapi")
    except (ImportError, OSError):
        return False
    return True


def require() -> None:
    """Raise the clear error when the "kerberos" extra is missing."""
    if not available():
        raise KafkaOperationError(
            -1,
            "KERBEROS_UNAVAILABLE",
            'GSSAPI needs the "kerberos" extra (python gssapi), which is not installed: '
            "pip install '.[kerberos]' (it builds against libkrb5-dev)",
            False,
        )


def kerberos_error(exc: BaseException, principal: str) -> KafkaOperationError:
    """A GSSAPI/krb5 failure as an error naming the cause (keytab, KDC, principal)."""
    text = str(exc).replace("\n", " ").strip()
    low = text.lower()
    if "keytab" in low or "key table" in low:
        cause = f"the keytab of {principal} is unusable"
    elif "cannot contact any kdc" in low or "cannot find kdc" in low or "unable to reach" in low:
        cause = f"the KDC of {principal.rsplit('@', 1)[-1]} is unreachable"
    elif "no credentials cache found" in low:  # MIT: the keytab has no key for the principal
        cause = f"the keytab holds no key for {principal}"
    elif "not found in kerberos database" in low:
        cause = "a principal is unknown to the KDC"
    elif "clock skew" in low:
        cause = "the clocks of the console and the KDC differ too much"
    else:
        cause = "Kerberos login failed"
    return KafkaOperationError(58, "KERBEROS_LOGIN_FAILED", f"{cause}: {text}", False)


_conf_lock = threading.Lock()
_conf_files: list[str] = []
_ORIGINAL_KRB5_CONFIG = os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf"


def _publish_configs() -> None:
    os.environ["KRB5_CONFIG"] = ":".join([*_conf_files, _ORIGINAL_KRB5_CONFIG])


class KerberosLogin:
    """One principal's initiator credentials (thread-safe; renewed before they expire)."""

    def __init__(self, settings: KerberosSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._creds: Any = None
        self._until = 0.0
        self._dir: str | None = None
        self._ccache = f"MEMORY:console-{uuid.uuid4().hex}"

    def __repr__(self) -> str:
        return f"<KerberosLogin {self.settings.principal} service={self.settings.service_name}>"

    def _files(self) -> tuple[str, str | None]:
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="console-krb5-")  # 0700
            keytab = os.path.join(self._dir, "client.keytab")
            fd = os.open(keytab, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(self.settings.keytab)
            if self.settings.krb5_conf.strip():
                conf = os.path.join(self._dir, "krb5.conf")
                fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as fh:
                    fh.write(self.settings.krb5_conf)
                os.chmod(conf, 0o644)  # no secret in it; krb5 only needs to read it
                with _conf_lock:
                    _conf_files.insert(0, conf)
                    _publish_configs()
        conf_path = os.path.join(self._dir, "krb5.conf")
        return os.path.join(self._dir, "client.keytab"), (conf_path if os.path.exists(conf_path) else None)

    def credentials(self) -> Any:
        """The principal's initiator credentials (a TGT got from the keytab), cached until near expiry."""
        require()
        import gssapi

        with self._lock:
            if self._creds is not None and time.monotonic() < self._until:
                return self._creds
            try:
                keytab, _ = self._files()
                name = gssapi.Name(self.settings.principal, gssapi.NameType.kerberos_principal)
                creds = gssapi.Credentials(
                    name=name, usage="initiate", store={"client_keytab": keytab, "ccache": self._ccache}
                )
                lifetime = creds.lifetime  # asks the KDC for the TGT now: its errors surface here
            except gssapi.exceptions.GSSError as exc:
                raise kerberos_error(exc, self.settings.principal) from None
            self._creds = creds
            self._until = time.monotonic() + max(0.0, float(lifetime or 0) - _RENEW_BEFORE_S)
            return creds

    def close(self) -> None:
        """Remove the keytab (and this login's krb5.conf from KRB5_CONFIG)."""
        with self._lock:
            directory, self._dir, self._creds = self._dir, None, None
        if directory is None:
            return
        conf = os.path.join(directory, "krb5.conf")
        with _conf_lock:
            if conf in _conf_files:
                _conf_files.remove(conf)
                _publish_configs()
        shutil.rmtree(directory, ignore_errors=True)


_logins: dict[KerberosSettings, KerberosLogin] = {}
_logins_lock = threading.Lock()


def login_for(settings: KerberosSettings) -> KerberosLogin:
    """The process-wide login of these settings (the "kerberos" extra is required)."""
    require()
    register_mechanism()
    with _logins_lock:
        login = _logins.get(settings)
        if login is None:
            login = _logins[settings] = KerberosLogin(settings)
        return login


def forget(settings: KerberosSettings) -> None:
    """Close and forget a login (its gateway closed)."""
    with _logins_lock:
        login = _logins.pop(settings, None)
    if login is not None:
        login.close()


@atexit.register
def _close_all() -> None:  # pragma: no cover - process exit
    with _logins_lock:
        logins = list(_logins.values())
        _logins.clear()
    for login in logins:
        login.close()


_registered = False


def register_mechanism() -> None:
    """Make kafka-python's "GSSAPI" mechanism use a :class:`KerberosLogin`'s credentials.

    kafka-python 3 builds the mechanism as ``SASL_MECHANISMS[name](host=..., **connection_config)``;
    the connection config carries ``sasl_kerberos_name``, which the console sets to its login.
    Any other value keeps kafka-python's own behaviour (the default credentials).
    """
    global _registered
    if _registered:
        return
    from kafka.net.sasl import register_sasl_mechanism
    from kafka.net.sasl.gssapi import SaslMechanismGSSAPI

    class ConsoleGSSAPI(SaslMechanismGSSAPI):
        def __init__(self, **config: Any) -> None:
            login = config.get("sasl_kerberos_name")
            if not isinstance(login, KerberosLogin):
                super().__init__(**config)
                return
            import gssapi

            self._is_done = False
            self._is_authenticated = False
            host = config.get("sasl_kerberos_domain_name") or config.get("host", "")
            self.auth_id = f"{login.settings.service_name}@{host}"
            creds = login.credentials()
            try:
                self.gssapi_name = gssapi.Name(
                    self.auth_id, name_type=gssapi.NameType.hostbased_service
                ).canonicalize(gssapi.MechType.kerberos)
                self._client_ctx = gssapi.SecurityContext(
                    name=self.gssapi_name, usage="initiate", creds=creds
                )
                self._next_token = self._client_ctx.step(None)
            except gssapi.exceptions.GSSError as exc:
                raise kerberos_error(exc, login.settings.principal) from None

    register_sasl_mechanism("GSSAPI", ConsoleGSSAPI, overwrite=True)
    _registered = True
