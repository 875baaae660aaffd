"""A per-process budget of database connections for the threads a task starts (issue 33).

Django opens one connection per thread, so a worker's live-judge threads would each keep
one: 32 threads × 8 worker processes is 256 connections, above PostgreSQL's default
`max_connections` of 100. Threads that are not the task's own thread enter
`db_connection_slot()` around their database work: at most
DB_MAX_CONNECTIONS_PER_PROCESS − 1 of them are in at once (the task's own thread holds the
last connection), and each closes its connection on the way out, so a waiting or idle thread
holds none. README.md ("Production") gives the arithmetic.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from django.conf import settings
from django.db import connections

_semaphores: dict[int, threading.BoundedSemaphore] = {}
_semaphores_lock = threading.Lock()


def thread_connection_slots() -> int:
    """How many threads besides the task's own may hold a connection at once (0: none may)."""
    return settings.DB_MAX_CONNECTIONS_PER_PROCESS - 1


def _semaphore(slots: int) -> threading.BoundedSemaphore:
    with _semaphores_lock:
        if slots not in _semaphores:
            _semaphores[slots] = threading.BoundedSemaphore(slots)
        return _semaphores[slots]


@contextmanager
def db_connection_slot():
    """Hold one of the process's thread connection slots; close this thread's connections after."""
    with _semaphore(max(1, thread_connection_slots())):
        try:
            yield
        finally:
            # Connections are per thread: this closes only the ones this thread opened.
            connections.close_all()
