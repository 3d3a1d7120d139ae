"""The SCRAM credentials a cluster keeps (Kafka's ScramImage), held in its ``ClusterState``.

Plain data with no protocol or SASL code, so the state can hold it: AlterUserScramCredentials changes
it and DescribeUserScramCredentials reads it (``handlers/scram.py``), the SASL realm's SCRAM logins
read it (``sasl.py``), and ``persist.py`` saves and loads it with the rest of the state.
"""

from __future__ import annotations

import threading

# (salt, stored key, server key, iterations): what Kafka keeps of a SCRAM credential
ScramCredential = tuple[bytes, bytes, bytes, int]


class ScramCredentials:
    """(mechanism, user) -> credential, changed by AlterUserScramCredentials and read by
    DescribeUserScramCredentials and by every SCRAM exchange, so a credential works (or stops working)
    on the next login. Handlers change it under the state's lock; its own lock lets a SASL login read
    it from anywhere."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[tuple[str, str], ScramCredential] = {}

    def __deepcopy__(self, memo: dict) -> ScramCredentials:
        """A detached copy with its own lock (the server runs a request that must leave no trace on
        a deep copy of the cluster state)."""
        clone = ScramCredentials()
        with self._lock:
            clone._by_key = dict(self._by_key)  # credentials are tuples of bytes and an int: immutable
        return clone

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        with self._lock:
            return self._by_key.get((mechanism, user))

    def put(self, mechanism: str, user: str, credential: ScramCredential) -> None:
        with self._lock:
            self._by_key[(mechanism, user)] = credential

    def remove(self, mechanism: str, user: str) -> bool:
        """Drop a credential; whether there was one."""
        with self._lock:
            return self._by_key.pop((mechanism, user), None) is not None

    def users(self) -> dict[str, dict[str, int]]:
        """user -> {mechanism: iterations}, users in the order they got their first credential."""
        out: dict[str, dict[str, int]] = {}
        with self._lock:
            for (mechanism, user), credential in self._by_key.items():
                out.setdefault(user, {})[mechanism] = credential[3]
        return out

    def items(self) -> list[tuple[str, str, ScramCredential]]:
        """(mechanism, user, credential) of every credential (what the state file keeps)."""
        with self._lock:
            return [(m, u, c) for (m, u), c in self._by_key.items()]

    def replace(self, credentials: list[tuple[str, str, ScramCredential]]) -> None:
        """Hold exactly these credentials (a state file being loaded)."""
        with self._lock:
            self._by_key = {(m, u): c for m, u, c in credentials}


__all__ = ["ScramCredential", "ScramCredentials"]
