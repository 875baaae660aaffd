"""The alert delivery task: one try per run, retried with backoff on what may succeed later.

Registered through `triage/tasks.py`. Follows the tasks' conventions (`config/task_retry.py`
`RETRY_ON_TRANSIENT`: an explicit name, late acknowledgement, retries of transient database and
broker errors); a receiver that may answer later (`DeliveryRetry`) is retried the same way, at
most `MAX_RETRIES` times with the backoff doubling up to `RETRY_BACKOFF_MAX_S`; a missing or
finished delivery is skipped.
"""

from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval

from config.task_retry import MAX_RETRIES, RETRY_BACKOFF_MAX_S, RETRY_ON_TRANSIENT
from triage.alert_delivery import DeliveryRetry, delivery_attempt, delivery_give_up


@shared_task(bind=True, name="triage.deliver_alert", **RETRY_ON_TRANSIENT)
def deliver_alert(self, delivery_id: int) -> str | None:
    """Send one alert to one webhook or address; retry an unreachable or failing receiver."""
    try:
        return delivery_attempt(delivery_id=delivery_id)
    except DeliveryRetry as exc:
        if self.request.retries >= MAX_RETRIES:
            delivery_give_up(delivery_id=delivery_id)
            return "failed"
        countdown = get_exponential_backoff_interval(
            factor=1, retries=self.request.retries, maximum=RETRY_BACKOFF_MAX_S, full_jitter=True
        )
        raise self.retry(exc=exc, countdown=countdown) from exc
