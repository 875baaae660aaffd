"""Who is processing a live query, how often it was tried, and when the pipeline gives up.

A pipeline task claims a live query with a token: its Celery task id, which a retry and a
redelivery keep. So the task's own retry (after a transient error) re-enters its claim,
while any other delivery of the same query finds it taken and leaves it alone. A claim
whose holder died (still `processing` after TRIAGE_PROCESSING_TIMEOUT_S) may be taken over.

Every claim that starts a pipeline run counts an attempt; a run that fails with a
non-transient error goes back to `pending` for the sweeper, and after TRIAGE_MAX_ATTEMPTS
the query is `failed` with its last error: listed on the unjudged page, where an analyst
can requeue it. Nothing loops forever and nothing is dropped.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from judges.vendor_access import redact_secrets
from triage.models import IngestStatus, LiveQuery
from triage.publishing import live_queries_publish_soon

logger = logging.getLogger(__name__)

ERROR_CHARS = 2000


def live_query_claim(*, live_id: int, token: str) -> bool:
    """Take the live query for the task holding `token`; False if another task has it, or it is over.

    A pending query is taken (an attempt); the same token re-enters its own claim (a retry,
    not a new attempt); a claim left by a dead worker is taken over (an attempt), unless
    that would be past TRIAGE_MAX_ATTEMPTS: then the query is marked failed instead. (A
    pending query is always within the limit: a run that raised at the limit ended failed.)
    """
    now = timezone.now()
    if LiveQuery.objects.filter(pk=live_id, status=IngestStatus.PENDING).update(
        status=IngestStatus.PROCESSING, claim_token=token, started_at=now, pipeline_attempts=F("pipeline_attempts") + 1
    ):
        return True
    if LiveQuery.objects.filter(pk=live_id, status=IngestStatus.PROCESSING, claim_token=token).exists():
        return True
    stale = now - timedelta(seconds=settings.TRIAGE_PROCESSING_TIMEOUT_S)
    taken = LiveQuery.objects.filter(pk=live_id, status=IngestStatus.PROCESSING, started_at__lt=stale).update(
        claim_token=token, started_at=now, pipeline_attempts=F("pipeline_attempts") + 1
    )
    return bool(taken) and not _fail_if_out_of_attempts(live_id=live_id, token=token)


def _fail_if_out_of_attempts(*, live_id: int, token: str) -> bool:
    """Mark the claimed query failed if this claim is past the attempt limit; say whether it was."""
    over = LiveQuery.objects.filter(
        pk=live_id, claim_token=token, pipeline_attempts__gt=settings.TRIAGE_MAX_ATTEMPTS
    ).values_list("pipeline_attempts", "last_error")
    row = over.first()
    if row is None:
        return False
    attempts, last_error = row
    # Only a worker that died mid-run gets here: a run that raised has recorded its error already.
    reason = last_error or "the worker processing it stopped before finishing"
    LiveQuery.objects.filter(pk=live_id, claim_token=token).update(
        status=IngestStatus.FAILED,
        claim_token="",
        finished_at=timezone.now(),
        last_error=f"gave up after {attempts - 1} attempts: {reason}"[:ERROR_CHARS],
    )
    logger.error("triage: live query %s failed after %d attempts", live_id, attempts - 1)
    return True


def live_query_attempt_failed(*, live_id: int, token: str, error: BaseException) -> str | None:
    """Record a run that raised: back to `pending` for the sweeper, or `failed` after the last attempt.

    Return the status it now has; None if the claim was no longer this task's.
    """
    message = redact_secrets(f"{type(error).__name__}: {error}")[:ERROR_CHARS]
    mine = LiveQuery.objects.filter(pk=live_id, status=IngestStatus.PROCESSING, claim_token=token)
    if mine.filter(pipeline_attempts__gte=settings.TRIAGE_MAX_ATTEMPTS).update(
        status=IngestStatus.FAILED, claim_token="", finished_at=timezone.now(), last_error=message
    ):
        logger.error("triage: live query %s failed for good: %s", live_id, message)
        return IngestStatus.FAILED
    # No publish time: the sweeper sends it again on its next pass (a minute apart).
    if mine.update(status=IngestStatus.PENDING, claim_token="", enqueued_at=None, last_error=message):
        return IngestStatus.PENDING
    return None


def live_query_requeue(*, live_id: int) -> bool:
    """Put a failed live query back to pending with a fresh attempt budget, and send it after commit.

    Return False when the query is not failed (requeued already, or never failed).
    """
    requeued = LiveQuery.objects.filter(pk=live_id, status=IngestStatus.FAILED).update(
        status=IngestStatus.PENDING,
        claim_token="",
        pipeline_attempts=0,
        last_error="",
        started_at=None,
        finished_at=None,
        enqueued_at=timezone.now(),
    )
    if requeued:
        transaction.on_commit(lambda: live_queries_publish_soon(ids=[live_id]))
    return bool(requeued)
