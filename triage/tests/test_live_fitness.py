"""A live judge's fitness: its calibrated badge on the policy page, one level lower when drift is found."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from labelling.services import goldset_fitness_thresholds_set
from triage.live_fitness import level_below, live_fitness
from triage.models import Alert, EstimateSnapshot
from triage.monitoring import calibration_for_live_judge
from triage.policy import policy_publish
from triage.tests import factories
from triage.tests.test_monitoring import calibrate, live_traffic


def test_drift_drops_the_live_level_one_step_and_explore_is_the_floor():
    assert [level_below(level) for level in ("gate", "monitor", "explore")] == ["monitor", "explore", "explore"]
    dropped = live_fitness({"level": "gate", "reasons": [], "needed": {}}, ["catch rate"])
    assert dropped["level"] == "monitor"
    assert "catch rate drifted" in dropped["reason"] and "calibrated gate" in dropped["reason"]
    both = live_fitness({"level": "monitor"}, ["catch rate", "false-reject rate"])
    assert both["level"] == "explore" and "catch rate and false-reject rate" in both["reason"]


def test_without_drift_the_live_level_is_the_calibrated_one_and_without_calibration_there_is_none():
    steady = live_fitness({"level": "gate"}, [])
    assert steady["level"] == "gate" and "no drift" in steady["reason"]
    assert live_fitness(None, ["catch rate"]) is None


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(admin)
    return client


@pytest.mark.django_db
def test_injected_drift_drops_the_live_fitness_on_the_snapshot_the_json_and_the_dashboard(admin_client):
    version = factories.judge_version()
    policy = policy_publish(changes={}, judge_versions=[version])
    calibrate(version, wrong=200, correct=400, catch=0.95, false_reject=0.01)
    calibrated = calibration_for_live_judge(version).fitness
    assert calibrated["level"] == "gate"
    # The policy page shows each live judge's calibrated badge.
    page = admin_client.get(reverse("admin:triage_triagepolicy_change", args=[policy.pk])).content.decode()
    assert f'data-judge-version="{version.pk}"' in page and 'data-fitness="gate"' in page
    live_traffic(version, catch=0.4, false_reject=0.01)  # the judge now misses most wrong queries
    out = StringIO()
    call_command("monitor_judges", "--format", "json", stdout=out)
    assert Alert.objects.filter(kind=Alert.Kind.CATCH_DRIFT, judge_version=version).exists()
    snapshot = EstimateSnapshot.objects.get(judge_version=version)
    assert snapshot.details["live_fitness"]["level"] == "monitor"
    assert "catch rate drifted" in snapshot.details["live_fitness"]["reason"]
    (entry,) = json.loads(out.getvalue())["judges"]
    assert entry["live_fitness"] == snapshot.details["live_fitness"]
    dashboard = admin_client.get(reverse("triage:dashboard")).content.decode()
    assert 'data-live-fitness="monitor"' in dashboard and "calibrated gate, now monitor" in dashboard


@pytest.mark.django_db
def test_a_steady_judge_keeps_its_calibrated_live_fitness():
    version = factories.judge_version()
    policy_publish(changes={}, judge_versions=[version])
    calibrate(version, wrong=200, correct=400, catch=0.95, false_reject=0.01)
    live_traffic(version, catch=0.95, false_reject=0.01)
    call_command("monitor_judges")
    assert not Alert.objects.filter(kind=Alert.Kind.CATCH_DRIFT).exists()
    assert EstimateSnapshot.objects.get(judge_version=version).details["live_fitness"]["level"] == "gate"


@pytest.mark.django_db
def test_the_policy_page_holds_live_judges_to_their_gold_sets_thresholds(admin_client):
    version = factories.judge_version()
    policy = policy_publish(changes={}, judge_versions=[version])
    calibrate(version, wrong=200, correct=400, catch=0.95, false_reject=0.01)
    url = reverse("admin:triage_triagepolicy_change", args=[policy.pk])
    assert 'data-fitness="gate"' in admin_client.get(url).content.decode()
    gold_set = version.calibration_runs.get().gold_set_version.gold_set
    goldset_fitness_thresholds_set(gold_set=gold_set, catch_lower=0.99, false_reject_upper=0.05, kappa_lower=0.6)
    page = admin_client.get(url).content.decode()
    assert 'data-fitness="gate"' not in page and "below 0.99 (gold set" in page
    assert calibration_for_live_judge(version).fitness["level"] != "gate"
