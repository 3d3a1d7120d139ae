"""gunicorn's settings for the console's web server: ``make run`` (``console/runner.py``), the
Dockerfile and docker-compose all start ``gunicorn -c console/gunicorn_conf.py console.wsgi``.

Sized for the console's load (docs/scaling.md, ``bench/bench_web_concurrency.py``): pages are
CPU-bound Python (templates, the metadata snapshot) with waits on Kafka and the database, and
every open reassignment page polls its progress fragment once a second.

* ``gthread`` workers, WEB_THREADS (4) threads each: a worker keeps connections alive (a progress
  tab reuses its connection every second instead of a new TCP connection per poll, which the
  ``sync`` worker closes after every response), and a thread waiting on Kafka or the database -
  a cold metadata read takes seconds at 100,000 partitions - does not hold the worker's other
  requests. Threads of one process share its interpreter lock, so CPU comes from processes:
* WEB_WORKERS processes, default one per core (at least 2): more processes than cores do not add
  CPU, and each keeps its own metadata snapshot (``console/topics/cache.py``: tens of MB at
  100,000 partitions), so memory grows with every one (``bench/bench_memory_100k.py``).
* ``preload_app``: the master imports the console (Django, every area, the URL table and the
  views) once and the workers are forked from it with those objects frozen out of the cyclic
  collector (``gc.freeze``), so the pages of code and module data stay shared between the workers
  instead of each worker holding its own ~110 MB copy (``bench/bench_memory_1m.py``: PSS once
  started). Nothing at import opens a connection or starts a thread (the database connection,
  Kafka clients and the metadata cache's files are made per worker, on first use).
* ``timeout`` 60 s: a worker silent that long is restarted (the longest page, a cold topic list
  at 100,000 partitions, takes a few seconds).
"""

from __future__ import annotations

import os

bind = os.environ.get("WEB_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = int(os.environ.get("WEB_WORKERS") or max(2, os.cpu_count() or 1))
threads = int(os.environ.get("WEB_THREADS") or 4)
timeout = 60
graceful_timeout = 10
keepalive = 5
# Logs to the console's stdout, prefixed by `make run`; one line per request would drown the rest.
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("WEB_LOG_LEVEL", "warning")
preload_app = True


def when_ready(server) -> None:
    """In the master, after the application was loaded and before any worker is forked: import the
    URL table (every view module, otherwise imported by each worker's first request) and freeze
    what is there, so the collector never writes to those objects' pages in a worker."""
    import gc

    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports every view
    gc.freeze()


def post_request(worker, req, environ, resp) -> None:
    """After each response: the C heap's free pages back to the OS once the worker grew more than
    64 MB since it last gave back (``heap.trim_when_grown``), so a heavy page at 1M partitions does
    not leave its peak resident in a worker that then serves light ones."""
    from console.kafka import heap

    heap.trim_when_grown()
