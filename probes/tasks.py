"""Background work of the probes app: the browser's "Refresh catalogue".

Routed to the `probes` queue (CELERY_TASK_ROUTES); retried only on transient errors. A
redelivered refresh that already finished does nothing (`catalogue_refresh_tracked`).
"""

from celery import shared_task

from config.task_retry import MAX_RETRIES, RETRY_BACKOFF_MAX_S, TRANSIENT_ERRORS
from probes.catalogue_jobs import REFRESH_TASK, catalogue_refresh_tracked


@shared_task(
    name=REFRESH_TASK,
    acks_late=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=True,
    retry_backoff_max=RETRY_BACKOFF_MAX_S,
    max_retries=MAX_RETRIES,
)
def refresh_catalogue(refresh_id: int) -> str | None:
    """Refresh one warehouse's catalogue as requested on its page, recording each step."""
    return catalogue_refresh_tracked(refresh_id)
