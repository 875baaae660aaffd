"""`AsyncDocketClient`: the same batching, retries and counters, for asyncio applications.

`log_query` is a plain (non-async) call that queues and returns at once; call it from the
event loop's thread (from other threads, use `DocketClient`). A task on the running loop sends
the batches; each post runs in a worker thread (`asyncio.to_thread`), so the loop never waits
on the network, and retries wait with `asyncio.sleep`. `await flush()`, `await close()`, or
`async with AsyncDocketClient(...)`. What is still queued at interpreter exit, after the loop
has gone, is sent from the exiting thread.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import functools
import logging
import time
import weakref

from docket_client._delivery import ClientStats, Options, Post, admitted, delivery, queue_row
from docket_client._transport import HttpTransport
from docket_client.client import deliver_blocking

logger = logging.getLogger("docket_client")


class Queued:
    """What `AsyncDocketClient.log_query` returns: true if the query was queued.

    It may be awaited too (`await docket.log_query(...)`), giving the same bool at once: queuing
    never waits, whichever way it is called.
    """

    __slots__ = ("queued",)

    def __init__(self, queued: bool):
        self.queued = queued

    def __bool__(self):
        return self.queued

    def __eq__(self, other):
        return self.queued == other

    def __hash__(self):
        return hash(self.queued)

    def __repr__(self):
        return repr(self.queued)

    def __await__(self):
        return self.queued
        yield  # a generator that finishes at once: awaiting it never suspends


def _drain_at_exit(reference: weakref.ref) -> None:
    client = reference()
    if client is not None:
        client._drain_blocking()


class AsyncDocketClient:
    """Send live queries to Docket's ingestion API in batches, from a task on the running loop."""

    def __init__(self, url: str, token: str, **options):
        self.options = Options(**options)
        self.stats = ClientStats()
        self._transport = HttpTransport(url, token, self.options.timeout)
        self._queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self._accepted = self._finished = self._taken = self._hurry_until = 0
        self._closing = False
        self._task: asyncio.Task | None = None
        self._wakeup: asyncio.Event | None = None
        self._progress: asyncio.Event | None = None
        self._exit_hook = functools.partial(_drain_at_exit, weakref.ref(self))
        atexit.register(self._exit_hook)

    def log_query(
        self, *, question, sql, warehouse, external_id=None, attempts=None, dialect=None, metadata=None
    ) -> Queued:
        """Queue one query for sending; the result is false if it was not queued (the reason is logged and counted)."""
        return Queued(
            self._queue_query(
                question=question,
                sql=sql,
                warehouse=warehouse,
                external_id=external_id,
                attempts=attempts,
                dialect=dialect,
                metadata=metadata,
            )
        )

    def _queue_query(self, **fields) -> bool:
        return queue_row(self._admit, fields, self.stats)

    def _admit(self, row: bytes) -> bool:
        if not admitted(self._queue, row, closing=self._closing, options=self.options, stats=self.stats):
            return False
        self._accepted += 1
        self._wake()
        return True

    @property
    def pending(self) -> int:
        """How many queries are queued or being sent."""
        return self._accepted - self._finished

    def _wake(self) -> None:
        """Start the sending task on the running loop if it is not running there; wake it."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the task starts at the next call made inside one
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._wakeup, self._progress = asyncio.Event(), asyncio.Event()
            self._task = loop.create_task(self._run(), name="docket-client")
        self._wakeup.set()

    async def flush(self, timeout: float | None = None) -> bool:
        """Send everything queued so far and wait for it; return True if it all finished in time."""
        target = self._accepted
        self._hurry_until = max(self._hurry_until, target)
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._finished < target:
            self._wake()
            self._progress.clear()
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._progress.wait(), remaining)
            except asyncio.TimeoutError:  # noqa: UP041 - on Python 3.10 it is not the builtin TimeoutError
                return False
        return True

    async def close(self, timeout: float | None = 10.0) -> bool:
        """Flush, then stop the task; later queries are dropped. Return True if everything was sent."""
        flushed = await self.flush(timeout)
        self._closing = True
        if self._task is not None and not self._task.done():
            if flushed:
                self._wakeup.set()
                await self._task
            else:
                logger.warning("docket_client: closed with %d queries not yet delivered", self.pending)
                self._task.cancel()
        self._transport.close()
        atexit.unregister(self._exit_hook)
        return flushed

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        await self.close()

    async def _next_batch(self) -> list[bytes] | None:
        """Wait for a full batch, the oldest query's interval, or a flush; None once closed and empty."""
        while True:
            self._wakeup.clear()
            if self._queue:
                due = self._queue[0][0] + self.options.flush_interval
                hurry = self._taken < self._hurry_until or self._closing
                if hurry or len(self._queue) >= self.options.batch_size or time.monotonic() >= due:
                    break
                timeout = due - time.monotonic()
            elif self._closing:
                return None
            else:
                timeout = None
            # asyncio's own TimeoutError: on Python 3.10 it is not the builtin one.
            with contextlib.suppress(asyncio.TimeoutError):  # noqa: UP041
                await asyncio.wait_for(self._wakeup.wait(), timeout)
        size = min(self.options.batch_size, len(self._queue))
        self._taken += size
        return [self._queue.popleft()[1] for _ in range(size)]

    async def _run(self) -> None:
        while (batch := await self._next_batch()) is not None:
            try:
                await self._deliver(batch)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the task must outlive any one failure
                self.stats.add("failed", len(batch), error="unexpected error while sending")
                logger.exception("docket_client: sending %d queries failed", len(batch))
            finally:
                self._finished += len(batch)
                self._progress.set()

    async def _deliver(self, batch: list[bytes]) -> None:
        steps = delivery(batch, options=self.options, stats=self.stats)
        try:
            step = next(steps)
            while True:
                if isinstance(step, Post):
                    step = steps.send(await asyncio.to_thread(self._transport.post, step.body))
                else:
                    await asyncio.sleep(step.seconds)
                    step = steps.send(None)
        except StopIteration:
            return

    def _drain_blocking(self) -> None:
        """At interpreter exit: send what is still queued from this thread, within the timeout."""
        deadline = time.monotonic() + self.options.timeout
        while self._queue and time.monotonic() < deadline:
            batch = [self._queue.popleft()[1] for _ in range(min(self.options.batch_size, len(self._queue)))]
            deliver_blocking(batch, transport=self._transport, options=self.options, stats=self.stats)
            self._finished += len(batch)
        if self._queue:
            self.stats.add("dropped", len(self._queue), error="interpreter exit before delivery")
            logger.warning("docket_client: %d queries not delivered before exit", len(self._queue))
