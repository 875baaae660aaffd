"""The checks that run every minute: the queue's age, live queries failing, calibration runs failing.

Drift is checked hourly by `triage/monitoring.py` `judge_monitor`; these are cheap counts.
Each check raises an alert for the cause it finds (`triage/alerts.py` `alert_raise`) and
resolves the alerts whose cause it no longer finds.
"""

from datetime import timedelta

from django.db.models import Max, Q
from django.utils import timezone

from judges.models import CalibrationRun, RunStatus
from triage.alert_models import Alert
from triage.alerts import alert_raise, alerts_resolve, deliveries_requeue_stale
from triage.models import IngestStatus, LiveQuery, TriageItem, TriageStatus
from triage.policy import policy_current

QUEUE_SLA_CAUSE = "queue_sla"
LIVE_FAILED_CAUSE = "live_failed"
# Live failures of the last hour raise the alert; an hour without one resolves it.
LIVE_FAILED_WINDOW = timedelta(hours=1)
# Runs that failed this recently are alerted (older failures predate the check).
CALIBRATION_FAILED_WINDOW = timedelta(days=1)


def queue_sla_check(*, now=None) -> Alert | None:
    """Alert when the queue's oldest unresolved item waited longer than the policy's `queue_alert_minutes`."""
    now = now or timezone.now()
    policy = policy_current()
    limit = policy.queue_alert_minutes if policy else None
    oldest = (
        TriageItem.objects.filter(status__in=[TriageStatus.OPEN, TriageStatus.CLAIMED])
        .order_by("created_at")
        .values_list("pk", "created_at")
        .first()
    )
    if limit is None or oldest is None or now - oldest[1] <= timedelta(minutes=limit):
        alerts_resolve(cause_prefix=QUEUE_SLA_CAUSE)
        return None
    waited = int((now - oldest[1]).total_seconds() // 60)
    return alert_raise(
        kind=Alert.Kind.QUEUE_SLA,
        cause_key=QUEUE_SLA_CAUSE,
        message=f"The triage queue's oldest item (#{oldest[0]}) has waited {waited} min, past the {limit} min SLA.",
        details={"item": oldest[0], "waited_minutes": waited, "sla_minutes": limit, "policy": policy.version},
    )


def live_failures_check(*, now=None) -> Alert | None:
    """Alert when live queries failed in the pipeline (status `failed`) within the last hour."""
    now = now or timezone.now()
    failed = LiveQuery.objects.filter(status=IngestStatus.FAILED, finished_at__gte=now - LIVE_FAILED_WINDOW)
    figures = failed.aggregate(latest=Max("finished_at"))
    count = failed.count()
    if not count:
        alerts_resolve(cause_prefix=LIVE_FAILED_CAUSE)
        return None
    return alert_raise(
        kind=Alert.Kind.LIVE_FAILED,
        cause_key=LIVE_FAILED_CAUSE,
        message=f"{count} live quer{'y' if count == 1 else 'ies'} failed in the pipeline in the last hour.",
        details={"failed_last_hour": count, "latest": figures["latest"].isoformat() if figures["latest"] else None},
    )


def calibration_failures_check(*, now=None) -> list[Alert]:
    """Alert once for each calibration run that failed within the last day."""
    now = now or timezone.now()
    since = now - CALIBRATION_FAILED_WINDOW
    runs = CalibrationRun.objects.filter(status=RunStatus.FAILED).filter(
        Q(finished_at__gte=since) | Q(finished_at__isnull=True, created_at__gte=since)
    )
    raised = []
    for run_id, label in runs.values_list("pk", "label"):
        alert = alert_raise(
            kind=Alert.Kind.CALIBRATION_FAILED,
            cause_key=f"calibration_failed:run:{run_id}",
            message=f"Calibration run #{run_id}{f' ({label})' if label else ''} failed.",
            details={"run": run_id},
            once=True,
        )
        if alert is not None:
            raised.append(alert)
    return raised


def minute_checks_run() -> list[Alert]:
    """Run the every-minute checks and re-send deliveries left pending; return the alerts raised."""
    raised = [queue_sla_check(), live_failures_check(), *calibration_failures_check()]
    deliveries_requeue_stale()
    return [alert for alert in raised if alert is not None]
