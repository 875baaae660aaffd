"""Thin, idempotent Celery tasks of the triage app.

Each retries on transient errors only (`config/task_retry.py` `RETRY_ON_TRANSIENT`); any
other error is a bug, and retrying would only repeat it. A retry or a redelivery (messages
are acknowledged late) runs a task again, and each is written for that: `process_live_query`
re-enters its own claim or finds the query taken or done, `process_live_queries` and
`requeue_pending` only send such tasks again, and `monitor_judges` stores one snapshot per
judge and hour and raises an alert only when no unresolved one of its cause exists (`check_alerts` too).
"""

from celery import shared_task

from config.task_retry import RETRY_ON_TRANSIENT
from triage import pipeline
from triage.alert_checks import minute_checks_run
from triage.alert_tasks import deliver_alert  # noqa: F401 — registers the task with this app's tasks
from triage.enqueue import live_queries_requeue_stale
from triage.models import LiveQuery
from triage.monitor_passes import monitor_pass_tracked
from triage.monitoring import live_judges_monitor


@shared_task(bind=True, name="triage.process_live_query", **RETRY_ON_TRANSIENT)
def process_live_query(self, live_id: int) -> str | None:
    """Run the pipeline for one live query under this task's claim (a redelivery finds it done and exits).

    The claim token is the task id, which Celery's retries and redeliveries keep: a retry
    after a transient error re-enters its own claim instead of finding the query taken.
    """
    if not LiveQuery.objects.filter(pk=live_id).exists():
        return None
    return pipeline.live_query_process(live_id=live_id, claim_token=self.request.id or "")


@shared_task(name="triage.process_live_queries", **RETRY_ON_TRANSIENT)
def process_live_queries(live_ids: list[int]) -> int:
    """Fan a web process's batch out into one pipeline task per query, so workers share it."""
    for live_id in live_ids:
        process_live_query.apply_async(args=[live_id])
    return len(live_ids)


@shared_task(name="triage.requeue_pending", **RETRY_ON_TRANSIENT)
def requeue_pending() -> int:
    """Re-publish live queries left pending too long (e.g. the broker was down at ingest)."""
    return live_queries_requeue_stale()


@shared_task(name="triage.monitor_judges", **RETRY_ON_TRANSIENT)
def monitor_judges() -> int:
    """Re-measure live judges against fresh labels; raise drift alerts; store the estimates."""
    return len(live_judges_monitor())


@shared_task(name="triage.monitor_pass_run", **RETRY_ON_TRANSIENT)
def monitor_pass_run(pass_id: int) -> str | None:
    """Run the monitoring pass the dashboard asked for, recording its progress (a redelivery finds it done)."""
    return monitor_pass_tracked(pass_id=pass_id)


@shared_task(name="triage.check_alerts", **RETRY_ON_TRANSIENT)
def check_alerts() -> int:
    """Run the every-minute alert checks (queue SLA, live failures, failed runs); return alerts raised."""
    return len(minute_checks_run())
