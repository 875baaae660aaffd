"""Gunicorn settings for serving Docket in production: `gunicorn -c config/gunicorn.conf.py config.wsgi`.

Threads let a worker overlap the waits of a request (PostgreSQL commits, a slow page)
while the GIL caps each process at one core, so the default is a process per core, each
with eight threads. A one-query ingestion post waits for its commit (the WAL flush) longer
than it computes, and the posts waiting meanwhile share the next statement
(`triage/ingest_sharing.py`): in `tests/bench/bench_triage.py` on two busy cores, eight
threads took the single-post ceiling from 313–588 (3 runs) to 465–707 posts/s (6 runs), where
the bare JSON endpoint's went from 926–1,474 to 1,099–1,214 requests/s (README, "Ingestion
speed"). A third process cost 5-15 % more CPU per post, spent on contention for the same two
cores. Every value can be overridden from the environment; each thread may hold a database
connection (README, "Serving in production").
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count()))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
# Each worker listens on its own socket and the kernel spreads new connections evenly
# among them. With one shared socket, whichever worker woke first took most of the
# clients' keep-alive connections: one process (one core, because of the GIL) carried
# two thirds of the posts and queued while the other core idled (p99 x3 in the benchmark).
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "1") != "0"
# API clients keep connections open between posts; a short keep-alive spares the handshake.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
# Recycle workers now and then so a slow leak in any library cannot grow without bound.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "0"))
max_requests_jitter = max(1, max_requests // 10) if max_requests else 0
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None
