"""The live error-rate section before the hourly monitor has run (#21 defect 11)."""

import pytest
from django.urls import reverse

from triage.models import EstimateSnapshot
from triage.policy import policy_publish
from triage.tests.factories import judge_version, live_query

pytestmark = pytest.mark.django_db


def test_the_empty_section_says_when_the_estimate_will_appear(client_for):
    page = client_for("analyst").get(reverse("triage:dashboard"))
    assert b'id="no-estimate"' in page.content
    assert b"The monitor runs every 60 minutes" in page.content
    assert b'id="monitor-now"' not in page.content  # an analyst cannot run it


def test_an_ml_engineer_can_compute_it_now(client_for):
    version = judge_version()
    policy_publish(changes={"run_verifier": False, "run_fanout_detector": False}, judge_versions=[version])
    live_query()
    client = client_for("ml_engineer")
    assert b'id="monitor-now"' in client.get(reverse("triage:dashboard")).content
    response = client.post(reverse("triage:monitor_now"))
    assert response.status_code == 302
    assert EstimateSnapshot.objects.filter(judge_version=version).count() == 1
    assert b'id="no-estimate"' not in client.get(reverse("triage:dashboard")).content


def test_computing_now_is_refused_to_an_analyst(client_for):
    assert client_for("analyst").post(reverse("triage:monitor_now")).status_code == 403
