"""Hand committed live queries to the pipeline: one broker message for many queries.

A Celery message costs the web process about as much CPU as storing the query (~0.5 ms,
measured in tests/bench/bench_triage.py), whether it names one query or a hundred. So
each web process publishes from one background thread, at most once every
TRIAGE_PUBLISH_INTERVAL_MS: a post arriving after a quiet spell leaves at once, and under
load the posts of one interval share a message. The API answers without waiting for the
broker.

Nothing here can lose a query: every row is committed as `pending` before it is handed
over, and the sweeper (`triage.requeue_pending`) re-sends any still pending after a while,
whether the broker was down or the process died with ids in its buffer.
"""

import atexit
import logging
import os
import threading
import time

from django.conf import settings
from django.db import connections

from triage.enqueue import live_queries_enqueue

logger = logging.getLogger(__name__)


class LiveQueryPublisher:
    """A per-process buffer of live query ids and the thread that publishes them."""

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self._pending: list[int] = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._last_sent = 0.0
        # Held while the thread publishes, so a flush at exit can wait for the message in flight.
        self._in_flight = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def submit(self, ids: list[int]) -> None:
        """Queue committed ids for publishing; returns at once."""
        with self._lock:
            self._pending.extend(ids)
            self._ensure_thread()
            self._wake.notify()

    def flush(self) -> int:
        """Publish whatever is buffered now, from the calling thread; return how many ids were sent.

        Also waits for a message the thread is sending, so a process that flushes on its
        way out (a management command, a recycled web worker) leaves nothing half-sent.
        """
        with self._lock:
            batch, self._pending = self._pending, []
        sent = _publish(batch) if batch else 0
        with self._in_flight:
            return sent

    def _ensure_thread(self) -> None:
        # A forked child (gunicorn, Celery prefork) inherits the object but not the thread.
        if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._run, name="live-query-publisher", daemon=True)
            self._thread.start()

    def _wait_for_turn(self) -> None:
        """Wait for ids, then for the interval since the last message to pass."""
        with self._lock:
            while not self._pending:
                self._wake.wait()
        wait = self._last_sent + self.interval_s - time.monotonic()
        if wait > 0:
            time.sleep(wait)  # posts arriving meanwhile join this message

    def _run(self) -> None:
        while True:
            self._wait_for_turn()
            # Taken while holding `_in_flight`: a flush either takes the ids first or waits.
            with self._in_flight:
                with self._lock:
                    batch, self._pending = self._pending, []
                if not batch:
                    continue  # a flush took them
                self._last_sent = time.monotonic()
                try:
                    _publish(batch)
                except Exception:  # noqa: BLE001 - the thread must outlive any one failure
                    logger.exception(
                        "triage: publishing %d live queries failed; the sweeper will resend them", len(batch)
                    )
                finally:
                    # This thread touches the database only to record a failed publish; it
                    # keeps no connection open between messages.
                    connections.close_all()


def _publish(ids: list[int]) -> int:
    return live_queries_enqueue(ids=ids)


_publisher: LiveQueryPublisher | None = None
_publisher_lock = threading.Lock()


def publisher() -> LiveQueryPublisher:
    """This process's publisher, created on first use."""
    global _publisher
    with _publisher_lock:
        if _publisher is None:
            _publisher = LiveQueryPublisher(settings.TRIAGE_PUBLISH_INTERVAL_MS / 1000)
            # Send what is buffered when the process exits cleanly (gunicorn recycling a worker).
            atexit.register(_publisher.flush)
        _publisher.interval_s = settings.TRIAGE_PUBLISH_INTERVAL_MS / 1000
        return _publisher


def live_queries_publish_soon(*, ids: list[int]) -> None:
    """Hand committed ids to this process's publisher, or publish now if batching is off."""
    if settings.TRIAGE_PUBLISH_INTERVAL_MS > 0:
        publisher().submit(ids)
    else:
        _publish(ids)
