"""Injected faults: delay or fail requests of one API, optionally on one node, a number of times."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kafka.errors import for_code


@dataclass(slots=True)
class Fault:
    """One injected fault; ``remaining`` None means forever."""

    api_key: int
    node: int | None
    delay_s: float
    error_code: int | None
    remaining: int | None

    @property
    def error_message(self) -> str | None:
        """A message like Kafka's for the injected error."""
        if self.error_code is None:
            return None
        return f"Injected by the sandbox: {for_code(self.error_code).__name__}"


class Faults:
    """Thread-safe list of active faults."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> None:
        """Activate a fault."""
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        """Remove every fault."""
        with self._lock:
            self._faults.clear()

    def take(self, api_key: int, node: int) -> Fault | None:
        """The first fault matching this request, consuming one of its uses."""
        with self._lock:
            for f in self._faults:
                if f.api_key == api_key and f.node in (None, node):
                    if f.remaining is not None:
                        f.remaining -= 1
                        if f.remaining <= 0:
                            self._faults.remove(f)
                    return f
        return None

    def describe(self) -> list[dict[str, object]]:
        """Active faults as plain dicts (for the control socket)."""
        with self._lock:
            return [
                {
                    "api_key": f.api_key,
                    "node": f.node,
                    "delay_s": f.delay_s,
                    "error_code": f.error_code,
                    "remaining": f.remaining,
                }
                for f in self._faults
            ]
