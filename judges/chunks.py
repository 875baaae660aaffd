"""A run's chunks in the database: claim and lease, read what is left, hand back, finish the run.

A chunk is claimed with a conditional update (healthchecks' pattern), so two deliveries
of its task never work it at once; an expired lease means the holder died and the chunk
may be claimed again. Each claim draws a new lease token, and the lease is renewed,
finished and released only under it: a worker whose lease lapsed and was taken over
finds out at its next renewal and stops, and can end nobody else's work. The items
already judged are read from the verdicts themselves, so a redelivered or resumed chunk
judges only what is missing.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q, Sum
from django.utils import timezone

from judges.models import CalibrationRun, ChunkStatus, RunChunk, RunStatus, Verdict
from judges.verdict_sums import record_verdict_sums
from labelling.models import GoldSetVersionItem
from probes.selectors import catalogue_get_latest


def lease_duration() -> timedelta:
    """How long a lease lasts unrenewed (JUDGES_CHUNK_LEASE_S)."""
    return timedelta(seconds=settings.JUDGES_CHUNK_LEASE_S)


def chunk_claim(*, chunk_id: int) -> RunChunk | None:
    """Take the chunk if it is pending or its lease has expired; return None if someone else has it.

    The chunk returned carries this claim's `lease_token`.
    """
    now = timezone.now()
    token = uuid.uuid4().hex
    claimed = (
        RunChunk.objects.filter(pk=chunk_id)
        .filter(Q(status=ChunkStatus.PENDING) | Q(status=ChunkStatus.RUNNING, lease_until__lt=now))
        .update(
            status=ChunkStatus.RUNNING,
            lease_until=now + lease_duration(),
            lease_token=token,
            attempts=F("attempts") + 1,
            updated_at=now,
        )
    )
    if not claimed:
        return None
    chunk = RunChunk.objects.select_related("run__gold_set_version", "judge_version").get(pk=chunk_id)
    if chunk.lease_token != token:
        return None  # claimed and lost again in between (a lease shorter than this read)
    return chunk


def _held(chunk: RunChunk):
    """The chunk's row, as long as this holder's lease is the one on it."""
    return RunChunk.objects.filter(pk=chunk.pk, status=ChunkStatus.RUNNING, lease_token=chunk.lease_token)


def chunk_lease_renew(*, chunk: RunChunk, **figures) -> bool:
    """Extend this holder's lease (and store the chunk's figures); False if the lease is no longer its."""
    now = timezone.now()
    return bool(_held(chunk).update(lease_until=now + lease_duration(), updated_at=now, **figures))


def chunk_done(*, chunk: RunChunk) -> bool:
    """Mark the chunk done under this holder's lease; False if the lease is no longer its."""
    return bool(
        _held(chunk).update(status=ChunkStatus.DONE, lease_until=None, lease_token="", updated_at=timezone.now())
    )


def chunk_next_claim(*, run_id: int, judge_version_id: int) -> RunChunk | None:
    """Claim another pending chunk of the run and judge version, if any is left."""
    for candidate in chunk_pending_ids(run_id=run_id, judge_version_id=judge_version_id):
        claimed = chunk_claim(chunk_id=candidate)
        if claimed is not None:
            return claimed
    return None


def chunk_pending_ids(*, run_id: int, judge_version_id: int, limit: int = 8) -> list[int]:
    return list(
        RunChunk.objects.filter(run_id=run_id, judge_version_id=judge_version_id, status=ChunkStatus.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )


def chunk_release(*, chunk: RunChunk) -> bool:
    """Hand a chunk back (run stopped): a resume picks it up where its verdicts end.

    Only under this holder's lease: False (and nothing changed) if another worker holds it now.
    """
    return bool(
        _held(chunk).update(status=ChunkStatus.PENDING, lease_until=None, lease_token="", updated_at=timezone.now())
    )


def chunks_expired_release(*, run_id: int) -> int:
    """Hand back the run's chunks whose lease expired (their workers died); return how many.

    A chunk whose lease is current is left alone: its worker is still judging it and will
    go on (or hand it back itself), so releasing it would pay for its items twice.
    """
    now = timezone.now()
    return (
        RunChunk.objects.filter(run_id=run_id, status=ChunkStatus.RUNNING)
        .filter(Q(lease_until__lt=now) | Q(lease_until__isnull=True))
        .update(status=ChunkStatus.PENDING, lease_until=None, lease_token="", updated_at=now)
    )


def chunk_verdicts(*, chunk: RunChunk):
    return Verdict.objects.filter(
        run_id=chunk.run_id,
        judge_version_id=chunk.judge_version_id,
        repeat=chunk.repeat,
        query_id__gte=chunk.first_query_id,
        query_id__lte=chunk.last_query_id,
    )


def chunk_done_query_ids(*, chunk: RunChunk) -> set[int]:
    return set(chunk_verdicts(chunk=chunk).values_list("query_id", flat=True))


def chunk_queries(*, chunk: RunChunk, skip_ids: set):
    """Yield the chunk's gold queries not yet judged, grouped by warehouse (one slice in memory).

    Queries of one warehouse come together, each carrying the warehouse's latest catalogue
    (looked up once per chunk, on this thread): they share a prompt prefix, so the vendor's
    cache written by the first is read by the rest.
    """
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


def run_totals(run_id: int) -> dict:
    figures = RunChunk.objects.filter(run_id=run_id).aggregate(
        done=Sum("done_count"), errors=Sum("error_count"), spent=Sum("spent_usd"), total=Sum("item_count")
    )
    return {k: v or 0 for k, v in figures.items()}


def run_finish_if_complete(*, run_id: int) -> None:
    """Mark the run completed once no chunk is left (the last chunk to commit sees all)."""
    if RunChunk.objects.filter(run_id=run_id).exclude(status=ChunkStatus.DONE).exists():
        return
    totals = run_totals(run_id)
    completed = CalibrationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.COMPLETED,
        finished_at=timezone.now(),
        done_count=totals["done"],
        error_count=totals["errors"],
        spent_usd=totals["spent"],
    )
    if completed:
        # Every chunk is done, so nothing writes this run's verdicts any more.
        record_verdict_sums([run_id])


def run_finish_if_stopped(*, run_id: int) -> None:
    totals = run_totals(run_id)
    CalibrationRun.objects.filter(pk=run_id).exclude(status=RunStatus.RUNNING).update(
        done_count=totals["done"], error_count=totals["errors"], spent_usd=totals["spent"]
    )
