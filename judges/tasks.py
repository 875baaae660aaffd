"""Celery tasks for calibration runs: thin, idempotent, acks_late, retried on transient errors only.

Each task takes ids and calls one service or the runner; a claim (a conditional update)
makes a redelivered or retried task do nothing twice. Queues are routed in settings.
"""

import gc
import logging

from celery import shared_task
from celery.signals import worker_init
from django.db import transaction

from config.task_retry import RETRY_ON_TRANSIENT
from judges.backends.vendors import vendor_sdks_import
from judges.models import CalibrationRun, RunChunk
from judges.runner import run_chunk_execute
from judges.services import calibration_run_plan, run_chunks_enqueue, run_lanes_enqueue, run_stale_chunks_requeue

log = logging.getLogger(__name__)


@worker_init.connect
def vendor_sdks_preload(**_):
    """Import the vendor SDKs in the worker's parent process, before it forks its pool; then freeze its heap.

    The imports leave some 300,000 objects the collector would walk at every full
    collection: ~200 ms holding the GIL, during which all the pool's vendor threads stand
    still (twice in a 2,000-call run; issue 33). Frozen, a full collection walks only what
    the tasks made, and the pages the pool processes share from the fork stay shared.
    """
    vendor_sdks_import()
    gc.freeze()


@shared_task(name="judges.plan_calibration_run", **RETRY_ON_TRANSIENT)
def plan_calibration_run(run_id: int) -> int:
    """Split a run into chunks (once) and queue its lanes (services.run_lanes_enqueue)."""
    run = CalibrationRun.objects.filter(pk=run_id).first()
    if run is None:
        log.warning("calibration run %s is gone; nothing to plan", run_id)
        return 0
    chunk_ids = calibration_run_plan(run=run)
    if chunk_ids:
        transaction.on_commit(lambda: run_lanes_enqueue(run_id=run_id))
    return len(chunk_ids)


@shared_task(name="judges.execute_run_chunk", **RETRY_ON_TRANSIENT)
def execute_run_chunk(chunk_id: int) -> str:
    """Judge the missing items of one chunk, then go on as a lane; a redelivery does nothing twice."""
    if not RunChunk.objects.filter(pk=chunk_id).exists():
        log.warning("run chunk %s is gone; skipping", chunk_id)
        return "gone"
    return run_chunk_execute(chunk_id=chunk_id, hand_on=lambda following: run_chunks_enqueue(chunk_ids=[following]))


@shared_task(name="judges.requeue_stale_chunks", **RETRY_ON_TRANSIENT)
def requeue_stale_chunks() -> int:
    """Hand chunks of crashed workers (expired leases) to live ones; schedule with beat."""
    return run_stale_chunks_requeue()
