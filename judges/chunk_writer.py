"""Store a chunk's verdicts as they come: buffer, flush, keep the lease, notice a stop, finish.

The unique constraint on (judge version, query, run, repeat) makes a second copy of a
verdict impossible, so a flush after a redelivery stores only what is new. Every flush
renews the lease under the chunk's lease token; a writer whose lease was taken over
(it lapsed, another worker claimed the chunk) stops judging, so it pays for nothing the
new holder also pays for, and leaves the chunk to that holder.
"""

from __future__ import annotations

import time
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from judges.backends import VerdictResult
from judges.chunks import (
    chunk_done,
    chunk_lease_renew,
    chunk_release,
    chunk_verdicts,
    run_finish_if_complete,
    run_finish_if_stopped,
)
from judges.models import CalibrationRun, Decision, RunChunk, RunStatus, Verdict
from judges.services import prompt_prefixes_store

FLUSH_EVERY_VERDICTS = 64
FLUSH_EVERY_SECONDS = 1.0


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
        self.lease_lost = False
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
        """Store buffered verdicts, refresh the chunk's exact figures, renew the lease, check for stop.

        What was paid for is stored even when the lease is lost: the constraint keeps one
        verdict per slot, whoever stores it first.
        """
        if self.prefixes:
            self.prefix_ids.update(
                prompt_prefixes_store(judge_version_id=self.chunk.judge_version_id, results=self.prefixes.values())
            )
            self.prefixes = {}
        for verdict in self.buffer:
            sha = getattr(verdict, "prefix_sha256", "")
            if sha:
                verdict.prompt_prefix_id = self.prefix_ids[sha]
        with transaction.atomic():
            if self.buffer:
                Verdict.objects.bulk_create(self.buffer, ignore_conflicts=True, batch_size=500)
            figures = chunk_verdicts(chunk=self.chunk).aggregate(
                done=Count("id"), errors=Count("id", filter=Q(decision=Decision.ERROR)), spent=Sum("cost_usd")
            )
            renewed = chunk_lease_renew(
                chunk=self.chunk,
                done_count=figures["done"],
                error_count=figures["errors"],
                spent_usd=figures["spent"] or 0,
            )
        self.buffer, self.unflushed_spend = [], Decimal("0")
        self.last_flush = time.monotonic()
        if not renewed:
            self.lease_lost = True
            self.stop_reason = "lease lost: another worker holds this chunk now"
            return
        self.check_stop()

    def check_stop(self) -> None:
        if self.lease_lost:
            return
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


def chunk_finish(*, writer: ChunkWriter) -> str:
    """Flush a chunk whose items are all answered; mark it done, or hand it back if stopping.

    A writer that lost its lease does neither: the chunk is its new holder's to finish.
    """
    writer.flush()
    if writer.lease_lost:
        return f"stopped: {writer.stop_reason}"
    if writer.stopping:
        chunk_release(chunk=writer.chunk)
        run_finish_if_stopped(run_id=writer.chunk.run_id)
        return f"stopped: {writer.stop_reason}"
    if not chunk_done(chunk=writer.chunk):
        return "stopped: lease lost: another worker holds this chunk now"
    run_finish_if_complete(run_id=writer.chunk.run_id)
    return "done"
