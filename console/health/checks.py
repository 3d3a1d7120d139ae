"""/readyz: is this deployment able to do its work? The database, Redis, a worker on each queue, beat.

Each check is a django-health-check ``HealthCheck``: the library runs them concurrently, bounds each by
its timeout and turns whatever one raises into that check's error, so a failing dependency is a named
error in the answer, never an exception out of the view. The queue checks share one question to the
workers (Celery's ``inspect active_queues``, one broadcast answered by every worker within
HEALTH_WORKER_TIMEOUT_S) and are not asked when Redis, the broker that carries it, does not answer.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass

import redis
from asgiref.sync import async_to_sync
from django.conf import settings
from django.utils.module_loading import import_string
from health_check.base import HealthCheck, HealthCheckResult
from health_check.checks import Database
from health_check.contrib.redis import Redis
from health_check.exceptions import ServiceUnavailable

from console.health import store

REDIS_DOWN = "not checked: Redis is unreachable"


@dataclass(frozen=True)
class Readiness:
    """The answer of /readyz: ready when every check passed; each check's outcome by name."""

    ok: bool
    checks: dict[str, dict]

    def as_json(self) -> dict:
        return {"status": "ok" if self.ok else "unavailable", "checks": self.checks}


class WorkerSurvey:
    """Which workers consume which queue: asked once per probe, shared by the queue checks."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._answer: dict[str, list[str]] | str | None = None

    def consumers(self) -> dict[str, list[str]]:
        with self._lock:
            if self._answer is None:
                self._answer = self._ask()
        if isinstance(self._answer, str):
            raise ServiceUnavailable(self._answer)
        return self._answer

    def _ask(self) -> dict[str, list[str]] | str:
        try:
            store.client().ping()
        except (redis.RedisError, OSError):
            return REDIS_DOWN
        app = import_string(settings.HEALTH_CELERY_APP)
        try:
            replies = app.control.inspect(timeout=self.timeout_s).active_queues() or {}
        except Exception as exc:  # noqa: BLE001 - the probe reports, it does not fail
            return f"the workers could not be asked: {type(exc).__name__}"
        by_queue: dict[str, list[str]] = {}
        for worker, queues in replies.items():
            for queue in queues or ():
                by_queue.setdefault(queue.get("name", ""), []).append(worker)
        return by_queue


@dataclasses.dataclass
class QueueWorkers(HealthCheck):
    """At least one worker consumes the queue."""

    queue: str
    survey: WorkerSurvey = dataclasses.field(repr=False, compare=False)

    def run(self) -> None:
        if not self.survey.consumers().get(self.queue):
            raise ServiceUnavailable(
                f"no worker consumes the {self.queue} queue (none answered within {self.survey.timeout_s:g} s)"
            )


@dataclasses.dataclass
class BeatTick(HealthCheck):
    """Beat's 1 s operation tick ran recently (the tick task records its time, console.health.store)."""

    stale_after_s: float

    def run(self) -> None:
        try:
            at = store.last_tick()
        except (redis.RedisError, OSError):
            raise ServiceUnavailable(REDIS_DOWN) from None
        if at is None:
            raise ServiceUnavailable("beat's tick has never run (no tick recorded)")
        age = time.time() - at
        if age > self.stale_after_s:
            raise ServiceUnavailable(
                f"beat's last tick was {age:.0f} s ago (stale after {self.stale_after_s:g} s)"
            )


def _redis_client():
    from redis.asyncio import Redis as AsyncRedis

    timeout = store.REDIS_TIMEOUT_S
    return AsyncRedis.from_url(settings.REDIS_URL, socket_connect_timeout=timeout, socket_timeout=timeout)


def checks() -> list[tuple[str, HealthCheck]]:
    """The checks of /readyz, by the name the answer gives each."""
    survey = WorkerSurvey(settings.HEALTH_WORKER_TIMEOUT_S)
    return [
        ("database", Database()),
        ("redis", Redis(client_factory=_redis_client)),
        *[(f"workers:{queue}", QueueWorkers(queue=queue, survey=survey)) for queue in settings.WORKER_QUEUES],
        ("beat", BeatTick(stale_after_s=settings.HEALTH_TICK_STALE_S)),
    ]


async def _run_all(named: list[tuple[str, HealthCheck]]) -> list[HealthCheckResult]:
    import asyncio

    return await asyncio.gather(*(check.get_result() for _, check in named))


def readiness() -> Readiness:
    """Run every check (concurrently, each bounded) and name each outcome."""
    named = checks()
    results = async_to_sync(_run_all)(named)
    answer = {}
    for (name, _), result in zip(named, results, strict=True):
        entry: dict = {"ok": result.error is None, "took_ms": round(result.time_taken * 1000, 1)}
        if result.error is not None:
            entry["error"] = result.error.message
        answer[name] = entry
    return Readiness(all(entry["ok"] for entry in answer.values()), answer)
