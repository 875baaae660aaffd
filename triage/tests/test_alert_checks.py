"""The every-minute alert checks (queue SLA, live failures, failed runs) and the alerts page."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from judges.models import CalibrationRun, RunStatus
from labelling.models import GoldSet, GoldSetVersion
from triage.alert_checks import calibration_failures_check, live_failures_check, queue_sla_check
from triage.alert_models import Alert
from triage.models import IngestStatus, LiveQuery, TriageItem
from triage.tasks import check_alerts
from triage.tests import factories

pytestmark = pytest.mark.django_db


def item_waiting(minutes):
    item = factories.triage_item()
    TriageItem.objects.filter(pk=item.pk).update(created_at=timezone.now() - timedelta(minutes=minutes))
    return item


def test_the_queue_alert_fires_when_the_oldest_item_is_past_the_policys_sla_and_resolves_when_it_is_not():
    factories.quiet_policy(queue_alert_minutes=30)
    item = item_waiting(45)
    item_waiting(5)
    alert = queue_sla_check()
    assert alert.kind == "queue_sla" and alert.details["item"] == item.pk and alert.details["waited_minutes"] == 45
    assert queue_sla_check() is None  # the same cause, still unresolved: nothing new
    TriageItem.objects.filter(pk=item.pk).delete()
    assert queue_sla_check() is None
    alert.refresh_from_db()
    assert alert.resolved_at is not None


def test_no_queue_alert_without_the_policy_field_or_within_the_sla():
    factories.quiet_policy()
    item_waiting(600)
    assert queue_sla_check() is None
    factories.quiet_policy(queue_alert_minutes=900)
    assert queue_sla_check() is None
    assert not Alert.objects.exists()


def test_failed_live_queries_of_the_last_hour_raise_one_alert():
    for _ in range(3):
        factories.live_query(status=IngestStatus.FAILED)
    LiveQuery.objects.update(finished_at=timezone.now())
    factories.live_query(status=IngestStatus.PASSED)
    alert = live_failures_check()
    assert alert.details["failed_last_hour"] == 3 and "3 live queries failed" in alert.message
    assert live_failures_check() is None
    LiveQuery.objects.update(finished_at=timezone.now() - timedelta(hours=2))
    live_failures_check()
    alert.refresh_from_db()
    assert alert.resolved_at is not None


def test_a_failed_calibration_run_is_alerted_once_even_after_it_was_resolved():
    gold = GoldSetVersion.objects.create(gold_set=GoldSet.objects.create(name="g"), number=1)
    run = CalibrationRun.objects.create(gold_set_version=gold, status=RunStatus.FAILED, finished_at=timezone.now())
    CalibrationRun.objects.create(gold_set_version=gold, status=RunStatus.COMPLETED, finished_at=timezone.now())
    [alert] = calibration_failures_check()
    assert alert.cause_key == f"calibration_failed:run:{run.pk}"
    Alert.objects.filter(pk=alert.pk).update(resolved_at=timezone.now())
    assert calibration_failures_check() == []


def test_monitor_judges_and_the_minute_task_run_the_checks():
    factories.quiet_policy(queue_alert_minutes=10)
    item_waiting(20)
    out = StringIO()
    call_command("monitor_judges", "--checks-only", stdout=out)
    assert "alert queue_sla" in out.getvalue()
    Alert.objects.update(resolved_at=timezone.now())
    assert check_alerts.apply().get() == 1


def test_the_beat_runs_the_checks_every_minute_and_drift_hourly(settings):
    beat = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert beat["triage.check_alerts"] == 60.0 and beat["triage.monitor_judges"] == 3600.0


def test_the_database_refuses_a_second_unresolved_alert_of_one_cause():
    Alert.objects.create(kind="queue_sla", cause_key="queue_sla", message="a")
    with pytest.raises(IntegrityError), transaction.atomic():
        Alert.objects.create(kind="queue_sla", cause_key="queue_sla", message="b")


def test_the_alerts_page_lists_open_and_acknowledged_alerts_not_resolved_ones(client_for, role_users):
    Alert.objects.create(kind="queue_sla", cause_key="a", message="still open")
    Alert.objects.create(kind="queue_sla", cause_key="b", message="seen", acknowledged_at=timezone.now())
    Alert.objects.create(kind="queue_sla", cause_key="c", message="fixed-already", resolved_at=timezone.now())
    for role in ("analyst", "ml_engineer"):
        html = client_for(role).get(reverse("triage:alerts")).content.decode()
        assert "still open" in html and "seen" in html and "fixed-already" not in html
        assert "Acknowledge" not in html  # acknowledging takes an admin


def test_an_admin_resolves_an_alert_from_the_alerts_page(client_for):
    alert = Alert.objects.create(kind="queue_sla", cause_key="a", message="still open")
    client = client_for("admin")
    response = client.post(reverse("triage:resolve_alert", args=[alert.pk]), {"back": "alerts"})
    assert response["Location"] == reverse("triage:alerts")
    assert "still open" not in client.get(reverse("triage:alerts")).content.decode()
