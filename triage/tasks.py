"""Thin, idempotent Celery tasks of the triage app.

Each retries on transient errors only (a database or broker connection that dropped),
with exponential backoff; any other error is a bug, and retrying would only repeat it.
Every task is safe to run twice, so a retry (or a redelivery under `acks_late`) is harmless.
"""

from celery import shared_task
from django.db import InterfaceError
from django.db import OperationalError as DatabaseOperationalError
from kombu.exceptions import OperationalError as BrokerOperationalError

from triage import pipeline
from triage.alert_checks import minute_checks_run
from triage.alert_tasks import deliver_alert  # noqa: F401 — registers the task with this app's tasks
from triage.enqueue import live_queries_requeue_stale
from triage.models import LiveQuery
from triage.monitoring import live_judges_monitor

TRANSIENT_ERRORS = (DatabaseOperationalError, InterfaceError, BrokerOperationalError)
RETRY_ON_TRANSIENT = {
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": True,  # 1 s, 2 s, 4 s ... with jitter
    "retry_backoff_max": 60,
    "max_retries": 5,
}


@shared_task(bind=True, name="triage.process_live_query", acks_late=True, **RETRY_ON_TRANSIENT)
def process_live_query(self, live_id: int) -> str | None:
    """Run the pipeline for one live query under this task's claim (a redelivery finds it done and exits).

    The claim token is the task id, which Celery's retries and redeliveries keep: a retry
    after a transient error re-enters its own claim instead of finding the query taken.
    """
    if not LiveQuery.objects.filter(pk=live_id).exists():
        return None
    return pipeline.live_query_process(live_id=live_id, claim_token=self.request.id or "")


@shared_task(name="triage.process_live_queries", acks_late=True, **RETRY_ON_TRANSIENT)
def process_live_queries(live_ids: list[int]) -> int:
    """Fan a web process's batch out into one pipeline task per query, so workers share it."""
    for live_id in live_ids:
        process_live_query.apply_async(args=[live_id])
    return len(live_ids)


@shared_task(name="triage.requeue_pending", acks_late=True, **RETRY_ON_TRANSIENT)
def requeue_pending() -> int:
    """Re-publish live queries left pending too long (e.g. the broker was down at ingest)."""
    return live_queries_requeue_stale()


@shared_task(name="triage.monitor_judges", acks_late=True, **RETRY_ON_TRANSIENT)
def monitor_judges() -> int:
    """Re-measure live judges against fresh labels; raise drift alerts; store the estimates."""
    return len(live_judges_monitor())


@shared_task(name="triage.check_alerts", acks_late=True, **RETRY_ON_TRANSIENT)
def check_alerts() -> int:
    """Run the every-minute alert checks (queue SLA, live failures, failed runs); return alerts raised."""
    return len(minute_checks_run())
