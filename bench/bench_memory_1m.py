"""Memory of the web server and the Celery workers with a 1,000,000-partition cluster (issue 35).

``bench_memory_100k.py`` on the 1M estate (``BENCH_MEMORY_ESTATE=1m``, set here before it is
imported, so the sandbox it spawns builds the same): 200 brokers on 3 racks, 19,800 topics x 50
partitions + 10 topics x 1,000 (RF 3, sized logs), the same heavy paths (topic list cold and warm,
searches, overview, brokers page, a 1,000-partition topic's page, a telemetry snapshot, a
10,000-partition reassignment started with the form and polled for 30 s while two tabs watch it).

Two goals, both gated: the largest peak RSS of any console process <= 400 MB, and the PSS of every
console process together <= 2x that largest peak (one metadata copy per host: processes that each
keep their own copy of a 1M-partition cluster add up). Ratio = the larger of peak / 400 MB and
total / largest peak / 2.
Prints ``RESULT memory_1m ratio=<x> goal<=1`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

os.environ["BENCH_MEMORY_ESTATE"] = "1m"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import bench_memory_100k  # noqa: E402

if __name__ == "__main__":
    bench_memory_100k.main("memory_1m")
