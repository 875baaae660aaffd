"""`DocketClient`: queue live queries in the caller's thread, send them in batches from another.

`log_query` never blocks on the network and never raises: it encodes the query, appends it to
a bounded queue and returns whether it was queued. A full queue refuses the new query (it is
counted in `stats.dropped` and `log_query` returns False): the queries already waiting, the
oldest, are kept, and the caller learns at once which one was not. A daemon thread sends a
batch when `batch_size` queries wait or the oldest has waited `flush_interval` seconds.
`flush()` sends everything queued so far and waits for it; `close()` flushes and stops, and
runs by itself at interpreter exit.
"""

from __future__ import annotations

import atexit
import collections
import functools
import logging
import os
import threading
import time
import weakref

from docket_client._delivery import ClientStats, Options, Post, admitted, delivery, queue_row
from docket_client._transport import HttpTransport

logger = logging.getLogger("docket_client")


def _close_at_exit(reference: weakref.ref) -> None:
    client = reference()
    if client is not None:
        client.close(timeout=client.options.timeout)


def deliver_blocking(batch: list[bytes], *, transport: HttpTransport, options: Options, stats: ClientStats) -> None:
    """Run one batch's delivery in this thread: post, sleep before retries, until it is decided."""
    steps = delivery(batch, options=options, stats=stats)
    try:
        step = next(steps)
        while True:
            if isinstance(step, Post):
                step = steps.send(transport.post(step.body))
            else:
                time.sleep(step.seconds)
                step = steps.send(None)
    except StopIteration:
        return


class DocketClient:
    """Send live queries to Docket's ingestion API in batches, from a background thread."""

    def __init__(self, url: str, token: str, **options):
        self.options = Options(**options)
        self.stats = ClientStats()
        self._transport = HttpTransport(url, token, self.options.timeout)
        self._queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._accepted = 0  # queries queued, ever
        self._finished = 0  # queries sent, rejected or given up, ever
        self._hurry_until = 0  # send at once, without waiting to fill a batch, until this many are taken
        self._taken = 0
        self._closing = False
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        # One hook per client (a partial is unregistered by identity), holding the client weakly.
        self._exit_hook = functools.partial(_close_at_exit, weakref.ref(self))
        atexit.register(self._exit_hook)

    def log_query(
        self, *, question, sql, warehouse, external_id=None, attempts=None, dialect=None, metadata=None
    ) -> bool:
        """Queue one query for sending; return False if it was not queued (the reason is logged and counted)."""
        fields = {
            "question": question,
            "sql": sql,
            "warehouse": warehouse,
            "external_id": external_id,
            "attempts": attempts,
            "dialect": dialect,
            "metadata": metadata,
        }
        return queue_row(self._enqueue, fields, self.stats)

    def _enqueue(self, row: bytes) -> bool:
        with self._lock:
            if not admitted(self._queue, row, closing=self._closing, options=self.options, stats=self.stats):
                return False
            self._accepted += 1
            self._ensure_thread()
            self._changed.notify_all()
            return True

    def _ensure_thread(self) -> None:
        # A forked child (gunicorn with preload, multiprocessing) inherits the queue but not the thread.
        if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._run, name="docket-client", daemon=True)
            self._thread.start()

    @property
    def pending(self) -> int:
        """How many queries are queued or being sent."""
        with self._lock:
            return self._accepted - self._finished

    def flush(self, timeout: float | None = None) -> bool:
        """Send everything queued so far and wait for it; return True if it all finished in time."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            target = self._accepted
            self._hurry_until = max(self._hurry_until, target)
            if self._queue:
                self._ensure_thread()
            self._changed.notify_all()
            while self._finished < target:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True

    def close(self, timeout: float | None = 10.0) -> bool:
        """Flush, then stop the thread; later queries are dropped. Return True if everything was sent."""
        flushed = self.flush(timeout)
        with self._lock:
            self._closing = True
            self._changed.notify_all()
        if flushed:
            self._transport.close()
        else:
            logger.warning("docket_client: closed with %d queries not yet delivered", self.pending)
        atexit.unregister(self._exit_hook)
        return flushed

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _next_batch(self) -> list[bytes] | None:
        """Wait for a full batch, the oldest query's interval, or a flush; None once closed and empty."""
        with self._lock:
            while True:
                if self._queue:
                    due = self._queue[0][0] + self.options.flush_interval
                    if len(self._queue) >= self.options.batch_size or self._taken < self._hurry_until:
                        break
                    if self._closing or time.monotonic() >= due:
                        break
                    self._changed.wait(due - time.monotonic())
                elif self._closing:
                    return None
                else:
                    self._changed.wait()
            size = min(self.options.batch_size, len(self._queue))
            self._taken += size
            return [self._queue.popleft()[1] for _ in range(size)]

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            try:
                self._deliver(batch)
            except Exception:  # noqa: BLE001 - the thread must outlive any one failure
                self.stats.add("failed", len(batch), error="unexpected error while sending")
                logger.exception("docket_client: sending %d queries failed", len(batch))
            finally:
                with self._lock:
                    self._finished += len(batch)
                    self._changed.notify_all()

    def _deliver(self, batch: list[bytes]) -> None:
        deliver_blocking(batch, transport=self._transport, options=self.options, stats=self.stats)
