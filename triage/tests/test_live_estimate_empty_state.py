"""The live error-rate section before the hourly monitor has run (#21 defect 11)."""

import pytest
from django.urls import reverse

from config.progress import TaskStatus
from tests.support.fixtures import wait_for
from triage import tasks
from triage.models import EstimateSnapshot, MonitorPass
from triage.policy import policy_publish
from triage.tests.factories import judge_version, live_query

pytestmark = pytest.mark.django_db


def test_the_empty_section_says_when_the_estimate_will_appear(client_for):
    page = client_for("analyst").get(reverse("triage:dashboard"))
    assert b'id="no-estimate"' in page.content
    assert b"The monitor runs every 60 minutes" in page.content
    assert b'id="monitor-now"' not in page.content  # an analyst cannot run it


def test_an_ml_engineer_can_compute_it_now_as_a_task_with_progress(client_for, django_capture_on_commit_callbacks):
    version = judge_version()
    policy_publish(changes={"run_verifier": False, "run_fanout_detector": False}, judge_versions=[version])
    live_query()
    client = client_for("ml_engineer")
    assert b'id="monitor-now"' in client.get(reverse("triage:dashboard")).content
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("triage:monitor_now"))
    # The POST returned with the pass queued, not run: one task sent after the commit.
    assert response.status_code == 302 and len(callbacks) == 1
    assert EstimateSnapshot.objects.count() == 0
    monitor_pass = MonitorPass.objects.get()
    assert (monitor_pass.status, monitor_pass.judges_total) == (TaskStatus.QUEUED, 1)
    page = client.get(reverse("triage:dashboard")).content.decode()
    progress_url = reverse("triage:monitor_pass", args=[monitor_pass.pk])
    assert f'hx-get="{progress_url}"' in page and "Monitoring queued: waiting for a worker" in page
    # The task the callback sends, run here.
    assert tasks.monitor_pass_run(pass_id=monitor_pass.pk) == TaskStatus.DONE
    monitor_pass.refresh_from_db()
    assert (monitor_pass.judges_done, monitor_pass.judges_total, monitor_pass.percent) == (1, 1, 100.0)
    assert EstimateSnapshot.objects.filter(judge_version=version).count() == 1
    polled = client.get(progress_url, HTTP_HX_REQUEST="true")
    assert polled["HX-Refresh"] == "true" and "hx-get" not in polled.content.decode()
    page = client.get(reverse("triage:dashboard")).content.decode()
    assert 'id="no-estimate"' not in page and "Estimated the live error rate for 1 judge(s)." in page
    # A redelivered task leaves the finished pass alone.
    assert tasks.monitor_pass_run(pass_id=monitor_pass.pk) == TaskStatus.DONE
    assert EstimateSnapshot.objects.count() == 1


def test_asking_again_while_a_pass_is_pending_queues_it_once(client_for):
    client = client_for("ml_engineer")
    client.post(reverse("triage:monitor_now"))
    client.post(reverse("triage:monitor_now"))
    assert MonitorPass.objects.count() == 1
    assert (
        client_for("analyst").get(reverse("triage:monitor_pass", args=[MonitorPass.objects.get().pk])).status_code
        == 200
    )
    assert (
        client_for("labeller").get(reverse("triage:monitor_pass", args=[MonitorPass.objects.get().pk])).status_code
        == 403
    )


@pytest.mark.worker
def test_a_real_worker_runs_the_pass_the_dashboard_asked_for(client_for, celery_worker_process):
    version = judge_version()
    policy_publish(changes={"run_verifier": False, "run_fanout_detector": False}, judge_versions=[version])
    live_query()
    assert client_for("ml_engineer").post(reverse("triage:monitor_now")).status_code == 302
    monitor_pass = MonitorPass.objects.get()
    wait_for(
        lambda: MonitorPass.objects.get(pk=monitor_pass.pk).finished,
        timeout=120,
        what=f"the worker to run the monitoring pass (log: {celery_worker_process.output()[-2000:]})",
    )
    monitor_pass.refresh_from_db()
    assert monitor_pass.status == TaskStatus.DONE, monitor_pass.message
    assert EstimateSnapshot.objects.filter(judge_version=version).count() == 1


def test_computing_now_is_refused_to_an_analyst(client_for):
    assert client_for("analyst").post(reverse("triage:monitor_now")).status_code == 403
