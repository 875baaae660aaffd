"""The triage dashboard's "Compute it now": the hourly monitoring pass as a task whose progress the page shows.

`monitor_pass_request` stores a `MonitorPass` and sends `triage.monitor_pass_run` after the
commit (by name: tasks import services, never the reverse), so the POST returns at once; the
task calls `monitor_pass_tracked`, which runs `triage.monitoring.live_judges_monitor` and
writes each judge done, then the outcome, on the row the dashboard polls.
"""

from celery import current_app
from django.db import transaction
from django.utils import timezone

from config.progress import TaskStatus, failure_recorded
from triage.monitor_models import MonitorPass
from triage.monitoring import live_judges_monitor
from triage.policy import policy_current

MONITOR_PASS_TASK = "triage.monitor_pass_run"


def monitor_pass_request(*, requested_by=None) -> MonitorPass:
    """Queue a monitoring pass unless one is already queued or running; return the one that will run."""
    pending = MonitorPass.objects.filter(status__in=[TaskStatus.QUEUED, TaskStatus.RUNNING]).first()
    if pending is not None:
        return pending
    policy = policy_current()
    total = policy.judge_versions.count() if policy else 0
    monitor_pass = MonitorPass.objects.create(requested_by=requested_by, judges_total=total)
    transaction.on_commit(lambda: current_app.send_task(MONITOR_PASS_TASK, kwargs={"pass_id": monitor_pass.pk}))
    return monitor_pass


def monitor_pass_tracked(*, pass_id: int) -> str | None:
    """Run one requested pass, recording each judge done and the outcome; return its status.

    A redelivered task runs a pass still marked running again (a judge's snapshot is stored
    once per hour, so nothing is written twice) and leaves a finished one alone.
    """
    rows = MonitorPass.objects.filter(pk=pass_id)
    claimed = rows.filter(status__in=[TaskStatus.QUEUED, TaskStatus.RUNNING])
    if not claimed.update(status=TaskStatus.RUNNING, judges_done=0):
        found = rows.first()
        return found.status if found else None

    def progress(done: int, total: int) -> None:
        rows.update(judges_done=done, judges_total=total)

    with failure_recorded(rows):
        snapshots = live_judges_monitor(progress=progress)
    if snapshots:
        message = f"Estimated the live error rate for {len(snapshots)} judge(s)."
    else:
        message = "No judge is in the triage policy in force yet: nothing to estimate."
    rows.update(status=TaskStatus.DONE, judges_done=len(snapshots), message=message, finished_at=timezone.now())
    return TaskStatus.DONE


def monitor_pass_latest(*, within) -> MonitorPass | None:
    """The latest pass while it is pending, or when it finished less than `within` ago; else None."""
    latest = MonitorPass.objects.first()
    if latest is None or not latest.finished or latest.finished_at >= timezone.now() - within:
        return latest
    return None
