"""Execute one chunk of a calibration run: stream its items through the backend, store verdicts.

A chunk is claimed with a conditional update (healthchecks' pattern), so two deliveries
of its task never work it at once; an expired lease means the holder died and the chunk
may be claimed again. The items already judged are read from the verdicts themselves, so
a redelivered or resumed chunk judges only what is missing, and the unique constraint on
(judge version, query, run, repeat) makes a second copy of a verdict impossible.

Vendor calls run on threads, up to the vendor pool's concurrency; the calling thread
alone touches the database (buffer, flush, stop checks).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from datetime import timedelta
from decimal import Decimal

from django.db import connections, transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from judges.backends import VerdictResult, get_backend
from judges.models import CalibrationRun, ChunkStatus, Decision, RunChunk, RunStatus, Verdict

log = logging.getLogger(__name__)

LEASE = timedelta(minutes=5)
FLUSH_EVERY_VERDICTS = 64
FLUSH_EVERY_SECONDS = 1.0


def chunk_claim(chunk_id: int) -> RunChunk | None:
    """Take the chunk if it is pending or its lease has expired; return None if someone else has it."""
    now = timezone.now()
    claimed = (
        RunChunk.objects.filter(pk=chunk_id)
        .filter(Q(status=ChunkStatus.PENDING) | Q(status=ChunkStatus.RUNNING, lease_until__lt=now))
        .update(status=ChunkStatus.RUNNING, lease_until=now + LEASE, attempts=F("attempts") + 1)
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
    """Yield the chunk's gold queries not yet judged, in id order (one slice in memory)."""
    from labelling.models import GoldSetVersionItem

    items = (
        GoldSetVersionItem.objects.filter(
            version_id=chunk.run.gold_set_version_id,
            query_id__gte=chunk.first_query_id,
            query_id__lte=chunk.last_query_id,
        )
        .select_related("query__warehouse")
        .order_by("query_id")
    )
    for item in items:
        if item.query_id not in skip_ids:
            yield item.query


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
        self.unflushed_spend = Decimal("0")
        self.last_flush = time.monotonic()
        self.stop_reason = ""

    def add(self, query, result: VerdictResult) -> None:
        self.buffer.append(
            Verdict(
                judge_version_id=self.chunk.judge_version_id,
                query_id=query.pk,
                run_id=self.run.pk,
                repeat=self.chunk.repeat,
                **result.verdict_fields(),
            )
        )
        self.unflushed_spend += result.cost_usd

    def due(self) -> bool:
        return len(self.buffer) >= FLUSH_EVERY_VERDICTS or time.monotonic() - self.last_flush >= FLUSH_EVERY_SECONDS

    def flush(self) -> None:
        """Store buffered verdicts, refresh the chunk's exact figures, renew the lease, check for stop."""
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
                lease_until=timezone.now() + LEASE,
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


def run_chunk_execute(*, chunk_id: int) -> str:
    """Judge every missing item of one chunk; return what happened (for logs and tests)."""
    chunk = chunk_claim(chunk_id)
    if chunk is None:
        return "not claimed"
    writer = ChunkWriter(chunk)
    writer.check_stop()
    if writer.stopping:
        RunChunk.objects.filter(pk=chunk.pk).update(status=ChunkStatus.PENDING, lease_until=None)
        return f"not started: {writer.stop_reason}"
    done_ids = set(chunk_verdicts(chunk).values_list("query_id", flat=True))
    backend = get_backend(chunk.judge_version)
    queries = chunk_queries(chunk, done_ids)
    if backend.concurrent:
        judge_concurrently(backend, queries, writer)
    else:
        for query in queries:
            writer.add(query, judge_safely(backend, query))
            if writer.due():
                writer.flush()
                if writer.stopping:
                    break
    writer.flush()
    if writer.stopping:
        RunChunk.objects.filter(pk=chunk.pk).update(status=ChunkStatus.PENDING, lease_until=None)
        run_finish_if_stopped(chunk.run_id)
        return f"stopped: {writer.stop_reason}"
    RunChunk.objects.filter(pk=chunk.pk).update(status=ChunkStatus.DONE, lease_until=None)
    run_finish_if_complete(chunk.run_id)
    return "done"


def judge_concurrently(backend, queries, writer: ChunkWriter) -> None:
    """Keep the vendor pool's concurrency busy: refill a slot as soon as a call returns."""
    width = backend.pool.concurrency
    in_flight: dict = {}
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="judge") as executor:
        exhausted = False
        while True:
            while not exhausted and not writer.stopping and len(in_flight) < width:
                query = next(queries, None)
                if query is None:
                    exhausted = True
                    break
                in_flight[executor.submit(judge_safely, backend, query)] = query
            if not in_flight:
                break
            finished, _ = wait(in_flight, timeout=FLUSH_EVERY_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                writer.add(in_flight.pop(future), future.result())
            if writer.due():
                writer.flush()


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
