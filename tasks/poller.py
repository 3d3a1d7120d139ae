"""The poll worker's pool: due operations run on ``POLL_THREADS`` threads, fed by beat's tick.

Beat's tick (``tasks.operations.tick``, every second) hands each due operation to its worker
process's ``Poller`` and returns at once; the pool runs them side by side (a progress poll mostly
waits on Kafka). An operation that comes back asking to run again soon (a reassignment's poll waits
half a second) is run again by the pool when it is due, not at the next tick: its cadence is its
own poll plus its wait, whatever the other operations take, and nothing waits for a tick to start.
An operation is held by one place at a time (queued, running or timed here), so ticks arriving
meanwhile do not queue it twice; the claim (a conditional UPDATE) still decides who runs a step.

Each run claims in its thread's own name and closes the thread's database connection when done.
When the worker process ends, the pool finishes what it runs (``worker_process_shutdown``).
"""

from __future__ import annotations

import heapq
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from celery.signals import worker_process_shutdown
from django.db import connection
from django.utils import timezone

log = logging.getLogger(__name__)

# An operation due again within this long is kept and run by the pool when due (a poll's wait);
# a longer wait (a backoff, lost contact) goes back to the database for a later tick.
RERUN_WITHIN_S = 2.0


class Poller:
    """A bounded pool of due operations with its own short timers; one per worker process."""

    def __init__(self, threads: int, worker: str) -> None:
        self.worker = worker
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="poll")
        self._lock = threading.Condition()
        self._held: set[int] = set()  # queued, running or timed here
        self._timers: list[tuple[float, int]] = []  # (monotonic due time, operation id), a heap
        self._closed = False
        threading.Thread(target=self._fire_timers, name="poll-timers", daemon=True).start()

    def submit(self, op_id: int) -> bool:
        """Run the operation on the pool; False when the pool already holds it."""
        with self._lock:
            if self._closed or op_id in self._held:
                return False
            self._held.add(op_id)
        self._pool.submit(self._run, op_id)
        return True

    def idle(self, timeout_s: float) -> bool:
        """Wait until the pool holds nothing (True), or ``timeout_s`` passed (False)."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._held, timeout_s)

    def shutdown(self) -> None:
        """Take nothing more and drop the timers (their operations are due in the database); finish
        what runs."""
        with self._lock:
            self._closed = True
            for _, op_id in self._timers:
                self._held.discard(op_id)
            self._timers.clear()
            self._lock.notify_all()
        self._pool.shutdown(wait=True)

    def _run(self, op_id: int) -> None:
        from console import operations
        from console.models import OperationState

        again = None
        try:
            op = operations.run(op_id, worker=f"{self.worker}:{threading.current_thread().name}")
            if op is not None and op.state == OperationState.RUNNING and not op.claimed_by and op.next_run_at:
                delay = (op.next_run_at - timezone.now()).total_seconds()
                if delay <= RERUN_WITHIN_S:
                    again = max(0.0, delay)
        except Exception:  # the pool's future is never read: say it here; the next tick runs it again
            log.exception("operation %s: the poll thread's run failed", op_id)
        finally:
            connection.close()  # this thread's own connection (Django opens one per thread)
            with self._lock:
                if again is None or self._closed:
                    self._held.discard(op_id)
                else:
                    heapq.heappush(self._timers, (time.monotonic() + again, op_id))
                self._lock.notify_all()

    def _fire_timers(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                now = time.monotonic()
                due = []
                while self._timers and self._timers[0][0] <= now:
                    due.append(heapq.heappop(self._timers)[1])
                if not due:
                    self._lock.wait(self._timers[0][0] - now if self._timers else None)
                    continue
            for op_id in due:
                try:
                    self._pool.submit(self._run, op_id)
                except RuntimeError:  # shut down meanwhile: the operation is due in the database
                    return


_POLLERS: dict[int, Poller] = {}  # by process id: a forked child makes its own (threads do not fork)
_CREATE = threading.Lock()


def poller(threads: int, worker: str) -> Poller:
    """This process's pool, made on first use."""
    with _CREATE:
        found = _POLLERS.get(os.getpid())
        if found is None:
            found = _POLLERS[os.getpid()] = Poller(threads, worker)
        return found


@worker_process_shutdown.connect
def _finish(**kwargs) -> None:
    found = _POLLERS.pop(os.getpid(), None)
    if found is not None:
        found.shutdown()
