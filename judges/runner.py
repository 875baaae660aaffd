"""Execute one chunk of a calibration run: stream its items through the backend, store verdicts.

`run_chunk_execute` claims a chunk (`judges/chunks.py`) and chooses how to judge it: one
item after another, as one vendor batch (`judge_by_batch`), or on a pool of threads
(`ConcurrentJudging`). `judges/chunk_writer.py` `ChunkWriter` stores what comes back.

Vendor calls run on threads, up to the vendor pool's concurrency; the calling thread
alone touches the database (buffer, flush, stop checks) and keeps the threads fed.
"""

from __future__ import annotations

import queue
import threading
import time

from django.db import connections

from judges.backends import VerdictResult, get_backend, judge_safely
from judges.backends.policy import VendorCallFailed
from judges.chunk_writer import FLUSH_EVERY_SECONDS, ChunkWriter, chunk_finish
from judges.chunks import (
    chunk_claim,
    chunk_done_query_ids,
    chunk_next_claim,
    chunk_pending_ids,
    chunk_queries,
    chunk_release,
)
from judges.models import CalibrationRun, RunChunk, RunStatus

# A task goes on to further chunks of its judge version for this long, then returns so the
# chunks of the run's other judge versions queued behind it get their turn on this worker.
CHAIN_SECONDS = 30.0
# While items are queued ahead, the task's thread lets answers gather this long before
# storing them, instead of waking once per answer.
GATHER_SECONDS = 0.02


def run_chunk_execute(*, chunk_id: int, continue_with_next: bool = True, hand_on=None) -> str:
    """Judge every missing item of one chunk; return what happened (for logs and tests).

    With `continue_with_next`, a vendor-backed chunk goes on to the next pending chunk of
    the same judge version without returning to the broker, so the pool never drains
    between chunks (for CHAIN_SECONDS, then the other judge versions get their turn).

    With `hand_on` (a task's), this is a lane (services.run_lanes_enqueue): a chunk taken
    already is no reason to stop, another pending chunk of the judge version is claimed;
    and while the version has chunks pending when this returns, `hand_on(chunk id)` queues
    the lane's next task, behind the other versions' lanes.
    """
    chunk = chunk_claim(chunk_id=chunk_id)
    if chunk is None and hand_on is not None:
        mine = RunChunk.objects.filter(pk=chunk_id).values("run_id", "judge_version_id").first()
        chunk = mine and chunk_next_claim(run_id=mine["run_id"], judge_version_id=mine["judge_version_id"])
    if chunk is None:
        return "not claimed"
    outcome = chunk_execute(chunk=chunk, continue_with_next=continue_with_next)
    if hand_on is not None and CalibrationRun.objects.filter(pk=chunk.run_id, status=RunStatus.RUNNING).exists():
        following = chunk_pending_ids(run_id=chunk.run_id, judge_version_id=chunk.judge_version_id, limit=1)
        if following:
            hand_on(following[0])
    return outcome


def chunk_execute(*, chunk: RunChunk, continue_with_next: bool) -> str:
    writer = ChunkWriter(chunk)
    writer.check_stop()
    if writer.stopping:
        chunk_release(chunk=chunk)
        return f"not started: {writer.stop_reason}"
    backend = get_backend(chunk.judge_version)
    if getattr(backend, "use_batches", False):
        return judge_by_batch(backend=backend, writer=writer)
    if backend.concurrent:
        return ConcurrentJudging(backend, writer, continue_with_next=continue_with_next).run()
    for query in chunk_queries(chunk=chunk, skip_ids=chunk_done_query_ids(chunk=chunk)):
        writer.add(query, judge_safely(backend, query))
        if writer.due():
            writer.flush()
            if writer.stopping:
                break
    return chunk_finish(writer=writer)


def judge_by_batch(*, backend, writer: ChunkWriter) -> str:
    """Send the chunk's missing items as one vendor batch, wait for it, store the results.

    The batch id is kept on the chunk before waiting, so a resumed chunk waits for the
    same batch rather than paying for it twice.
    """
    chunk = writer.chunk
    done_ids = chunk_done_query_ids(chunk=chunk)
    queries = {query.pk: query for query in chunk_queries(chunk=chunk, skip_ids=done_ids)}  # one slice, bounded
    if queries:
        batch_id = RunChunk.objects.values_list("batch_id", flat=True).get(pk=chunk.pk)
        try:
            if not batch_id:
                batch_id = backend.batch_submit(queries.values())
                RunChunk.objects.filter(pk=chunk.pk).update(batch_id=batch_id)

            def while_waiting():
                writer.flush()  # renews the lease and notices a cancel
                return writer.stopping

            for query_id, result in backend.batch_results(batch_id, while_waiting=while_waiting):
                query = queries.pop(query_id, None)
                if query is not None:
                    writer.add(query, result)
                if writer.due():
                    writer.flush()
        except VendorCallFailed as exc:
            for query in queries.values():
                writer.add(query, VerdictResult.error(f"batch failed: {exc.reason}"))
            queries = {}
        if not writer.stopping:
            for query in queries.values():
                writer.add(query, VerdictResult.error("the batch returned no result for this item"))
    return chunk_finish(writer=writer)


class ConcurrentJudging:
    """Keep the vendor pool's concurrency busy: each thread takes its next item as soon as a call returns.

    The calling thread keeps a queue of items (from the current chunk, then from lazily
    claimed next ones) two pools' width ahead of the threads, and stores their results; a
    thread never waits for it between two calls, so a flush or a chunk boundary does not
    idle the pool. A chunk is finished once all its items are answered.
    """

    def __init__(self, backend, first: ChunkWriter, *, continue_with_next: bool):
        self.backend = backend
        self.width = backend.pool.concurrency
        self.continue_with_next = continue_with_next
        self.chained_since = time.monotonic()
        self.writers = [first]  # chunks being judged, in the order they were claimed
        self.pending = {first: 0}  # per chunk: items handed out and not answered yet
        self.in_flight = 0  # handed to the threads, not yet answered
        self.exhausted = False  # no item is left to hand out
        self.outcome = "done"
        self.items = self.chained_items(first)
        self.todo: queue.SimpleQueue = queue.SimpleQueue()
        self.answered: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = [
            threading.Thread(target=self.judge_loop, name=f"judge-{i}", daemon=True) for i in range(self.width)
        ]

    def run(self) -> str:
        """Judge until every handed-out item is answered; return the last chunk's outcome."""
        # Items are queued before the threads start, so the first round of calls leaves at once
        # rather than as the queue fills one item at a time behind threads already waiting.
        self.feed()
        for thread in self.threads:
            thread.start()
        try:
            while True:
                self.feed()
                if self.stopping:
                    self.in_flight -= self.take_back_queued()
                self.finish_answered_chunks()
                if not self.in_flight:
                    break
                self.store(self.collect_answers())
                self.flush_due()
        finally:
            self.stop_threads()
        # Whatever is left was cut short by a stop: store it and hand the chunks back.
        for writer in self.writers:
            self.outcome = chunk_finish(writer=writer)
        return self.outcome

    @property
    def stopping(self) -> bool:
        return any(writer.stopping for writer in self.writers)

    # --- Items in: the current chunk, then the judge version's next ones -------------------

    def chained_items(self, first: ChunkWriter):
        """Yield (writer, query) for every missing item, chaining on to further chunks while allowed."""
        writer = first
        while writer is not None:
            for query in chunk_queries(chunk=writer.chunk, skip_ids=chunk_done_query_ids(chunk=writer.chunk)):
                yield writer, query
            writer.exhausted = True
            writer = self.next_writer(after=writer)

    def next_writer(self, *, after: ChunkWriter) -> ChunkWriter | None:
        """Claim the judge version's next pending chunk, unless chaining is off, stopping or over time."""
        if not self.continue_with_next or after.stopping or time.monotonic() - self.chained_since > CHAIN_SECONDS:
            return None
        following = chunk_next_claim(run_id=after.chunk.run_id, judge_version_id=after.chunk.judge_version_id)
        if following is None:
            return None
        writer = ChunkWriter(following)
        self.writers.append(writer)
        return writer

    def feed(self) -> None:
        """Keep two pools' width of items queued beyond the calls in flight."""
        while not self.exhausted and not self.stopping and self.todo.qsize() < 2 * self.width:
            item = next(self.items, None)
            if item is None:
                self.exhausted = True
                return
            writer, _ = item
            self.pending[writer] = self.pending.get(writer, 0) + 1
            self.in_flight += 1
            self.todo.put(item)

    # --- The threads ------------------------------------------------------------------------

    def judge_loop(self) -> None:
        """One thread: judge queued items until told to stop (None)."""
        try:
            while (item := self.todo.get()) is not None:
                writer, query = item
                try:
                    result = judge_safely(self.backend, query)
                except BaseException as exc:  # noqa: BLE001 - the caller must get an answer for every item
                    result = VerdictResult.error(f"judge crashed: {type(exc).__name__}")
                self.answered.put((writer, query, result))
        finally:
            # A backend may read the database (a related row, a recorded attempt): the thread's
            # connection closes as the thread ends, not when the collector finds it (the budget).
            connections.close_all()

    def take_back_queued(self) -> int:
        """Take back the queued items no thread has started; return how many."""
        taken = 0
        while True:
            try:
                item = self.todo.get_nowait()
            except queue.Empty:
                return taken
            if item is not None:
                self.pending[item[0]] -= 1
                taken += 1

    def stop_threads(self) -> None:
        """Let the threads go: items not started are dropped (their chunk is handed back)."""
        self.take_back_queued()
        for _ in self.threads:
            self.todo.put(None)
        for thread in self.threads:
            thread.join()

    # --- Answers out ------------------------------------------------------------------------

    def collect_answers(self) -> list:
        """Wait up to a flush interval for an answer, then take every answer that is in."""
        try:
            results = [self.answered.get(timeout=FLUSH_EVERY_SECONDS)]
        except queue.Empty:
            results = []
        if results and not self.exhausted:
            # The threads have plenty queued: let answers gather rather than wake (and
            # take the GIL) once per answer.
            time.sleep(GATHER_SECONDS)
        while True:
            try:
                results.append(self.answered.get_nowait())
            except queue.Empty:
                return results

    def store(self, results: list) -> None:
        for writer, query, result in results:
            self.in_flight -= 1
            self.pending[writer] -= 1
            writer.add(query, result)

    def flush_due(self) -> None:
        for writer in self.writers:
            if writer.due():
                writer.flush()

    def finish_answered_chunks(self) -> None:
        """Finish each chunk whose items are all handed out and answered."""
        for writer in list(self.writers):
            if writer.exhausted and not self.pending.get(writer):
                self.outcome = chunk_finish(writer=writer)
                self.writers.remove(writer)
                self.pending.pop(writer, None)
