"""Execute one chunk of a calibration run: stream its items through the backend, store verdicts.

A chunk is claimed with a conditional update (healthchecks' pattern), so two deliveries
of its task never work it at once; an expired lease means the holder died and the chunk
may be claimed again. The items already judged are read from the verdicts themselves, so
a redelivered or resumed chunk judges only what is missing, and the unique constraint on
(judge version, query, run, repeat) makes a second copy of a verdict impossible.

Vendor calls run on threads, up to the vendor pool's concurrency; the calling thread
alone touches the database (buffer, flush, stop checks) and keeps the threads fed.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from datetime import timedelta
from decimal import Decimal

from django.db import connections, transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from judges.backends import VerdictResult, get_backend
from judges.models import CalibrationRun, ChunkStatus, Decision, RunChunk, RunStatus, Verdict
from judges.services import prompt_prefix_ids
from probes.selectors import catalogue_get_latest

log = logging.getLogger(__name__)

LEASE = timedelta(minutes=5)
FLUSH_EVERY_VERDICTS = 64
FLUSH_EVERY_SECONDS = 1.0
# A task goes on to further chunks of its judge version for this long, then returns so the
# chunks of the run's other judge versions queued behind it get their turn on this worker.
CHAIN_SECONDS = 30.0
# While items are queued ahead, the task's thread lets answers gather this long before
# storing them, instead of waking once per answer.
GATHER_SECONDS = 0.02


def chunk_claim(chunk_id: int) -> RunChunk | None:
    """Take the chunk if it is pending or its lease has expired; return None if someone else has it."""
    now = timezone.now()
    claimed = (
        RunChunk.objects.filter(pk=chunk_id)
        .filter(Q(status=ChunkStatus.PENDING) | Q(status=ChunkStatus.RUNNING, lease_until__lt=now))
        .update(status=ChunkStatus.RUNNING, lease_until=now + LEASE, attempts=F("attempts") + 1, updated_at=now)
    )
    if not claimed:
        return None
    return RunChunk.objects.select_related("run__gold_set_version", "judge_version").get(pk=chunk_id)


def chunk_verdicts(chunk: RunChunk):
    return Verdict.objects.filter(
        run_id=chunk.run_id,
        judge_version_id=chunk.judge_version_id,
        repeat=chunk.repeat,
        query_id__gte=chunk.first_query_id,
        query_id__lte=chunk.last_query_id,
    )


def chunk_queries(chunk: RunChunk, skip_ids: set):
    """Yield the chunk's gold queries not yet judged, grouped by warehouse (one slice in memory).

    Queries of one warehouse come together, each carrying the warehouse's latest catalogue
    (looked up once per chunk, on this thread): they share a prompt prefix, so the vendor's
    cache written by the first is read by the rest.
    """
    from labelling.models import GoldSetVersionItem

    items = (
        GoldSetVersionItem.objects.filter(
            version_id=chunk.run.gold_set_version_id,
            query_id__gte=chunk.first_query_id,
            query_id__lte=chunk.last_query_id,
        )
        .select_related("query__warehouse")
        .order_by("query__warehouse_id", "query_id")
    )
    catalogues: dict = {}
    for item in items:
        if item.query_id not in skip_ids:
            query = item.query
            if query.warehouse_id not in catalogues:
                catalogues[query.warehouse_id] = catalogue_get_latest(warehouse_id=query.warehouse_id)
            query.judge_catalogue = catalogues[query.warehouse_id]
            yield query


def judge_safely(backend, query) -> VerdictResult:
    """Call the backend; anything it raises becomes an error verdict, never a reject."""
    try:
        return backend.judge(query)
    except Exception as exc:  # noqa: BLE001 - a crashing checker is counted, not folded into a verdict
        log.exception("judge %s crashed on query %s", backend.judge_version, query.pk)
        return VerdictResult.error(f"judge crashed: {type(exc).__name__}: {exc}")
    finally:
        if getattr(backend, "uses_database", False) and getattr(backend, "concurrent", False):
            connections.close_all()  # this thread's own connections only


class ChunkWriter:
    """Buffer verdicts and flush them; keep the chunk's lease and figures current; watch for stop."""

    def __init__(self, chunk: RunChunk):
        self.chunk = chunk
        self.run = chunk.run
        self.buffer: list[Verdict] = []
        # The request prefixes of buffered verdicts, by hash; stored once at flush.
        self.prefixes: dict[str, VerdictResult] = {}
        self.prefix_ids: dict[str, int] = {}
        self.unflushed_spend = Decimal("0")
        self.last_flush = time.monotonic()
        self.stop_reason = ""
        self.exhausted = False  # every item of the chunk has been handed out

    def add(self, query, result: VerdictResult) -> None:
        verdict = Verdict(
            judge_version_id=self.chunk.judge_version_id,
            query_id=query.pk,
            run_id=self.run.pk,
            repeat=self.chunk.repeat,
            **result.verdict_fields(),
        )
        if result.prefix_sha256:
            verdict.prefix_sha256 = result.prefix_sha256
            if result.prefix_sha256 not in self.prefix_ids:
                self.prefixes[result.prefix_sha256] = result
        self.buffer.append(verdict)
        self.unflushed_spend += result.cost_usd

    def due(self) -> bool:
        return len(self.buffer) >= FLUSH_EVERY_VERDICTS or time.monotonic() - self.last_flush >= FLUSH_EVERY_SECONDS

    def flush(self) -> None:
        """Store buffered verdicts, refresh the chunk's exact figures, renew the lease, check for stop."""
        now = timezone.now()
        if self.prefixes:
            self.prefix_ids.update(
                prompt_prefix_ids(judge_version_id=self.chunk.judge_version_id, results=self.prefixes.values())
            )
            self.prefixes = {}
        for verdict in self.buffer:
            sha = getattr(verdict, "prefix_sha256", "")
            if sha:
                verdict.prompt_prefix_id = self.prefix_ids[sha]
        with transaction.atomic():
            if self.buffer:
                Verdict.objects.bulk_create(self.buffer, ignore_conflicts=True, batch_size=500)
            figures = chunk_verdicts(self.chunk).aggregate(
                done=Count("id"), errors=Count("id", filter=Q(decision=Decision.ERROR)), spent=Sum("cost_usd")
            )
            RunChunk.objects.filter(pk=self.chunk.pk).update(
                done_count=figures["done"],
                error_count=figures["errors"],
                spent_usd=figures["spent"] or 0,
                lease_until=now + LEASE,
                updated_at=now,
            )
        self.buffer, self.unflushed_spend = [], Decimal("0")
        self.last_flush = time.monotonic()
        self.check_stop()

    def check_stop(self) -> None:
        run = CalibrationRun.objects.only("status", "spend_cap_usd").get(pk=self.run.pk)
        if run.status != RunStatus.RUNNING:
            self.stop_reason = f"run is {run.status}"
            return
        if run.spend_cap_usd is None:
            return
        spent = RunChunk.objects.filter(run_id=run.pk).aggregate(s=Sum("spent_usd"))["s"] or Decimal("0")
        if spent + self.unflushed_spend >= run.spend_cap_usd:
            reason = f"spend cap ${run.spend_cap_usd} reached (${spent:.4f} spent)"
            CalibrationRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
                status=RunStatus.STOPPED_BUDGET, stop_reason=reason, finished_at=timezone.now()
            )
            self.stop_reason = reason

    @property
    def stopping(self) -> bool:
        return bool(self.stop_reason)


def chunk_release(chunk: RunChunk) -> None:
    """Hand a chunk back (run stopped): a resume picks it up where its verdicts end."""
    RunChunk.objects.filter(pk=chunk.pk).update(status=ChunkStatus.PENDING, lease_until=None, updated_at=timezone.now())


def chunk_finish(writer: ChunkWriter) -> str:
    """Flush a chunk whose items are all answered; mark it done, or hand it back if stopping."""
    writer.flush()
    if writer.stopping:
        chunk_release(writer.chunk)
        run_finish_if_stopped(writer.chunk.run_id)
        return f"stopped: {writer.stop_reason}"
    RunChunk.objects.filter(pk=writer.chunk.pk).update(
        status=ChunkStatus.DONE, lease_until=None, updated_at=timezone.now()
    )
    run_finish_if_complete(writer.chunk.run_id)
    return "done"


def pending_chunk_ids(run_id: int, judge_version_id: int, limit: int = 8) -> list[int]:
    return list(
        RunChunk.objects.filter(run_id=run_id, judge_version_id=judge_version_id, status=ChunkStatus.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )


def next_chunk_claim(run_id: int, judge_version_id: int) -> RunChunk | None:
    """Claim another pending chunk of the run and judge version, if any is left."""
    for candidate in pending_chunk_ids(run_id, judge_version_id):
        claimed = chunk_claim(candidate)
        if claimed is not None:
            return claimed
    return None


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
    chunk = chunk_claim(chunk_id)
    if chunk is None and hand_on is not None:
        mine = RunChunk.objects.filter(pk=chunk_id).values("run_id", "judge_version_id").first()
        chunk = mine and next_chunk_claim(mine["run_id"], mine["judge_version_id"])
    if chunk is None:
        return "not claimed"
    outcome = chunk_execute(chunk, continue_with_next=continue_with_next)
    if hand_on is not None and CalibrationRun.objects.filter(pk=chunk.run_id, status=RunStatus.RUNNING).exists():
        following = pending_chunk_ids(chunk.run_id, chunk.judge_version_id, limit=1)
        if following:
            hand_on(following[0])
    return outcome


def chunk_execute(chunk: RunChunk, *, continue_with_next: bool) -> str:
    writer = ChunkWriter(chunk)
    writer.check_stop()
    if writer.stopping:
        chunk_release(chunk)
        return f"not started: {writer.stop_reason}"
    backend = get_backend(chunk.judge_version)
    if getattr(backend, "use_batches", False):
        return judge_by_batch(backend, writer)
    if backend.concurrent:
        return judge_concurrently(backend, writer, continue_with_next=continue_with_next)
    done_ids = set(chunk_verdicts(chunk).values_list("query_id", flat=True))
    for query in chunk_queries(chunk, done_ids):
        writer.add(query, judge_safely(backend, query))
        if writer.due():
            writer.flush()
            if writer.stopping:
                break
    return chunk_finish(writer)


def judge_by_batch(backend, writer: ChunkWriter) -> str:
    """Send the chunk's missing items as one vendor batch, wait for it, store the results.

    The batch id is kept on the chunk before waiting, so a resumed chunk waits for the
    same batch rather than paying for it twice.
    """
    from judges.backends.policy import VendorCallFailed

    chunk = writer.chunk
    done_ids = set(chunk_verdicts(chunk).values_list("query_id", flat=True))
    queries = {query.pk: query for query in chunk_queries(chunk, done_ids)}  # one slice, bounded
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
    return chunk_finish(writer)


def judge_concurrently(backend, first: ChunkWriter, *, continue_with_next: bool) -> str:
    """Keep the vendor pool's concurrency busy: each thread takes its next item as soon as a call returns.

    The calling thread keeps a queue of items (from the current chunk, then from lazily
    claimed next ones) two pools' width ahead of the threads, and stores their results; a
    thread never waits for it between two calls, so a flush or a chunk boundary does not
    idle the pool. A chunk is finished once all its items are answered.
    """
    width = backend.pool.concurrency
    writers = [first]
    outcome = "done"
    chained_since = time.monotonic()

    def work():
        writer = first
        while writer is not None:
            done_ids = set(chunk_verdicts(writer.chunk).values_list("query_id", flat=True))
            for query in chunk_queries(writer.chunk, done_ids):
                yield writer, query
            writer.exhausted = True
            if not continue_with_next or writer.stopping or time.monotonic() - chained_since > CHAIN_SECONDS:
                return
            following = next_chunk_claim(writer.chunk.run_id, writer.chunk.judge_version_id)
            if following is None:
                return
            writer = ChunkWriter(following)
            writers.append(writer)

    todo: queue.SimpleQueue = queue.SimpleQueue()
    answered: queue.SimpleQueue = queue.SimpleQueue()

    def judge_loop():
        while (item := todo.get()) is not None:
            writer, query = item
            try:
                result = judge_safely(backend, query)
            except BaseException as exc:  # noqa: BLE001 - the caller must get an answer for every item
                result = VerdictResult.error(f"judge crashed: {type(exc).__name__}")
            answered.put((writer, query, result))

    items = work()
    exhausted = False
    in_flight = 0  # handed to the threads, not yet answered
    pending = {first: 0}  # per chunk: items handed out and not answered yet
    threads = [threading.Thread(target=judge_loop, name=f"judge-{i}", daemon=True) for i in range(width)]
    for thread in threads:
        thread.start()
    try:
        while True:
            # Keep two pools' width of items queued beyond the calls in flight.
            while not exhausted and not any(w.stopping for w in writers) and todo.qsize() < 2 * width:
                item = next(items, None)
                if item is None:
                    exhausted = True
                    break
                writer, _ = item
                pending[writer] = pending.get(writer, 0) + 1
                in_flight += 1
                todo.put(item)
            if any(w.stopping for w in writers):
                in_flight -= _unqueue(todo, pending)
            for writer in list(writers):
                if writer.exhausted and not pending.get(writer):
                    outcome = chunk_finish(writer)
                    writers.remove(writer)
                    pending.pop(writer, None)
            if not in_flight:
                break
            try:
                results = [answered.get(timeout=FLUSH_EVERY_SECONDS)]
            except queue.Empty:
                results = []
            if results and not exhausted:
                # The threads have plenty queued: let answers gather rather than wake (and
                # take the GIL) once per answer.
                time.sleep(GATHER_SECONDS)
            while True:  # take every answer that is in, one flush check for all
                try:
                    results.append(answered.get_nowait())
                except queue.Empty:
                    break
            for writer, query, result in results:
                in_flight -= 1
                pending[writer] -= 1
                writer.add(query, result)
            for writer in writers:
                if writer.due():
                    writer.flush()
    finally:
        # Let the threads go: items not started are dropped (their chunk is handed back).
        _unqueue(todo, pending)
        for _ in threads:
            todo.put(None)
        for thread in threads:
            thread.join()
    # Whatever is left was cut short by a stop: store it and hand the chunks back.
    for writer in writers:
        outcome = chunk_finish(writer)
    return outcome


def _unqueue(todo: queue.SimpleQueue, pending: dict) -> int:
    """Take back the queued items no thread has started; return how many."""
    taken = 0
    while True:
        try:
            item = todo.get_nowait()
        except queue.Empty:
            return taken
        if item is not None:
            pending[item[0]] -= 1
            taken += 1


def run_totals(run_id: int) -> dict:
    figures = RunChunk.objects.filter(run_id=run_id).aggregate(
        done=Sum("done_count"), errors=Sum("error_count"), spent=Sum("spent_usd"), total=Sum("item_count")
    )
    return {k: v or 0 for k, v in figures.items()}


def run_finish_if_complete(run_id: int) -> None:
    """Mark the run completed once no chunk is left (the last chunk to commit sees all)."""
    if RunChunk.objects.filter(run_id=run_id).exclude(status=ChunkStatus.DONE).exists():
        return
    totals = run_totals(run_id)
    CalibrationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.COMPLETED,
        finished_at=timezone.now(),
        done_count=totals["done"],
        error_count=totals["errors"],
        spent_usd=totals["spent"],
    )


def run_finish_if_stopped(run_id: int) -> None:
    totals = run_totals(run_id)
    CalibrationRun.objects.filter(pk=run_id).exclude(status=RunStatus.RUNNING).update(
        done_count=totals["done"], error_count=totals["errors"], spent_usd=totals["spent"]
    )
