"""Background work of the labelling app: thin tasks calling one service each.

Routed to the `labelling` queue (CELERY_TASK_ROUTES); retried only on transient errors.
"""

from celery import shared_task

from config.task_retry import MAX_RETRIES, RETRY_BACKOFF_MAX_S, TRANSIENT_ERRORS
from labelling import services


@shared_task(
    name="labelling.query_fingerprint_fill",
    acks_late=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=True,
    retry_backoff_max=RETRY_BACKOFF_MAX_S,
    max_retries=MAX_RETRIES,
)
def query_fingerprint_fill(gold_set_id: int | None = None, batch: int = 500) -> int:
    """Fingerprint every query of the gold set still lacking one, a batch per transaction."""
    total = 0
    while filled := services.query_fingerprint_fill(gold_set_id=gold_set_id, limit=batch):
        total += filled
    return total
