"""A monitoring pass that fails says why on its row; one that lost its database connection stays
running for the task's retry (config/progress.py `failure_recorded`, shared with the gold-set audit)."""

import pytest
from django.db import OperationalError

from config.progress import TaskStatus
from triage import monitor_passes
from triage.monitor_models import MonitorPass

pytestmark = pytest.mark.django_db


def broken_monitor(error):
    def monitor(*, progress):
        progress(0, 2)
        raise error

    return monitor


def test_a_failing_pass_writes_the_error_on_its_row_and_raises(monkeypatch):
    monkeypatch.setattr(monitor_passes, "live_judges_monitor", broken_monitor(ValueError("no calibration")))
    monitor_pass = MonitorPass.objects.create()
    with pytest.raises(ValueError):
        monitor_passes.monitor_pass_tracked(pass_id=monitor_pass.pk)
    monitor_pass.refresh_from_db()
    assert (monitor_pass.status, monitor_pass.message) == (TaskStatus.FAILED, "ValueError: no calibration")
    assert monitor_pass.finished and monitor_pass.finished_at is not None


def test_a_lost_connection_leaves_the_pass_running_for_the_retry(monkeypatch):
    monkeypatch.setattr(monitor_passes, "live_judges_monitor", broken_monitor(OperationalError("server closed")))
    monitor_pass = MonitorPass.objects.create()
    with pytest.raises(OperationalError):
        monitor_passes.monitor_pass_tracked(pass_id=monitor_pass.pk)
    monitor_pass.refresh_from_db()
    assert (monitor_pass.status, monitor_pass.message, monitor_pass.judges_total) == (TaskStatus.RUNNING, "", 2)
    assert not monitor_pass.finished
