"""Send live queries to the pipeline's Celery tasks, and the sweeper that re-sends stragglers.

The tasks are named, not imported: `triage.tasks` imports this module's callers (the
sweeper task calls `live_queries_requeue_stale`), so importing the tasks here would close
a cycle. A signature by name runs the registered task when this process has it (eager
mode included) and otherwise just sends the message by name.
"""

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from triage.models import IngestStatus, LiveQuery

logger = logging.getLogger(__name__)

PROCESS_ONE = "triage.process_live_query"
PROCESS_MANY = "triage.process_live_queries"
# One quick retry at publish time; anything that still fails is the sweeper's.
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


def live_queries_enqueue(*, ids: list[int]) -> int:
    """Publish the pipeline's work for the given live queries; return how many were published.

    One message whatever the number of ids (a message costs the same for one id as for
    hundreds); a worker fans a batch out into one task per query. Must run outside any
    transaction (after commit). A broker that is down leaves the queries `pending` with no
    publish time: the error is logged, nothing is raised to the client, and the sweeper
    sends them later.
    """
    if not ids:
        return 0
    name, args = (PROCESS_ONE, [ids[0]]) if len(ids) == 1 else (PROCESS_MANY, [list(ids)])
    try:
        current_app.signature(name, args=args).apply_async(retry=True, retry_policy=PUBLISH_RETRY_POLICY)
    except Exception:  # noqa: BLE001 - any publish failure means "broker unavailable"
        LiveQuery.objects.filter(pk__in=ids).update(enqueued_at=None)
        logger.exception("triage: could not publish the pipeline's work; %d live queries stay pending", len(ids))
        return 0
    return len(ids)


def live_queries_requeue_stale(*, older_than: timedelta = timedelta(minutes=2), limit: int = 1000) -> int:
    """Re-publish live queries pending (or stuck processing) for longer than `older_than`."""
    cutoff = timezone.now() - older_than
    stale = (
        LiveQuery.objects.filter(
            Q(status=IngestStatus.PENDING, created_at__lt=cutoff)
            & (Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=cutoff))
        )
        | LiveQuery.objects.filter(
            status=IngestStatus.PROCESSING,
            started_at__lt=timezone.now() - timedelta(seconds=settings.TRIAGE_PROCESSING_TIMEOUT_S),
        )
    ).order_by("created_at")
    ids = list(stale.values_list("pk", flat=True)[:limit])
    if not ids:
        return 0
    LiveQuery.objects.filter(pk__in=ids).update(enqueued_at=timezone.now(), enqueue_attempts=F("enqueue_attempts") + 1)
    published = live_queries_enqueue(ids=ids)
    logger.info("triage: re-enqueued %d of %d stale live queries", published, len(ids))
    return published
