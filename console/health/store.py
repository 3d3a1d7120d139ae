"""The only module that knows how the health area keeps its state: beat's last tick, in Redis.

The tick runs every second on the poll worker; a key in Redis (the broker it already talks to) costs
one SET, where a database row would be a write a second. The value is the tick's Unix time. Nothing is
lost when Redis restarts: the next tick writes it again, and until then /readyz says beat is not ticking.
"""

from __future__ import annotations

import time

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

TICK_KEY = "console:health:beat-tick"
# A health probe or the tick must not wait on a Redis that does not answer.
REDIS_TIMEOUT_S = 1.0

_clients: dict[str, redis.Redis] = {}


def client() -> redis.Redis:
    """A Redis client for settings.REDIS_URL with short timeouts and no retries (one per URL)."""
    url = settings.REDIS_URL
    found = _clients.get(url)
    if found is None:
        found = _clients[url] = redis.Redis.from_url(
            url,
            socket_connect_timeout=REDIS_TIMEOUT_S,
            socket_timeout=REDIS_TIMEOUT_S,
            retry=Retry(NoBackoff(), 0),
        )
    return found


def record_tick(at: float | None = None) -> bool:
    """Note that beat's tick ran (called by the tick task); False when Redis could not take it."""
    try:
        client().set(TICK_KEY, repr(time.time() if at is None else at))
    except (redis.RedisError, OSError):
        return False
    return True


def last_tick() -> float | None:
    """The Unix time of beat's last tick, None when none was recorded (raises RedisError when down)."""
    value = client().get(TICK_KEY)
    return float(value) if value is not None else None


def queue_lengths(queues) -> dict[str, int]:
    """Messages waiting in each Celery queue (Celery's Redis transport keeps a queue as a list)."""
    pipe = client().pipeline()
    for queue in queues:
        pipe.llen(queue)
    return dict(zip(queues, pipe.execute(), strict=True))
