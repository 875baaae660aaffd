"""monitor_judges: calibration and fresh live labels in the database → estimates and alerts."""

import logging

import numpy as np
import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from judges.models import CalibrationRun, RunStatus, Verdict
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Label, LabelSource, Query, QuerySource
from triage.alerts import alert_acknowledge, alert_resolve
from triage.models import Alert, EstimateSnapshot, IngestStatus, LiveQuery
from triage.policy import policy_publish
from triage.tasks import monitor_judges
from triage.tests import factories

pytestmark = pytest.mark.django_db


def calibrate(version, *, wrong=100, correct=300, catch=0.6, false_reject=0.1, model="sim-model-1"):
    gold = GoldSet.objects.create(name=f"gold-{version.pk}")
    gold_version = GoldSetVersion.objects.create(gold_set=gold, number=1)
    run = CalibrationRun.objects.create(
        gold_set_version=gold_version, status=RunStatus.COMPLETED, repeats=1, finished_at=timezone.now()
    )
    run.judge_versions.add(version)
    truth = [True] * wrong + [False] * correct
    queries = Query.objects.bulk_create(
        [Query(question="q", sql="SELECT 1", gold_set=gold, external_id=f"g{i}") for i in range(len(truth))]
    )
    GoldSetVersionItem.objects.bulk_create(
        [
            GoldSetVersionItem(
                version=gold_version, query=q, decision="wrong" if w else "correct", error_class="other" if w else ""
            )
            for q, w in zip(queries, truth, strict=True)
        ]
    )
    caught, rejected = round(wrong * catch), round(correct * false_reject)
    decisions = ["reject"] * caught + ["accept"] * (wrong - caught) + ["reject"] * rejected
    decisions += ["accept"] * (correct - rejected)
    Verdict.objects.bulk_create(
        [
            Verdict(judge_version=version, query=q, run=run, decision=d, model_reported=model)
            for q, d in zip(queries, decisions, strict=True)
        ]
    )


def live_traffic(version, *, n=1500, prevalence=0.2, catch=0.6, false_reject=0.1, audit_share=0.2, model="sim-model-1"):
    """Build live queries judged by `version`; label all flagged (triage) and a share of the rest (audit)."""
    rng = np.random.default_rng(0)
    wh = factories.warehouse()
    wrong = rng.random(n) < prevalence
    flagged = np.where(wrong, rng.random(n) < catch, rng.random(n) < false_reject)
    audited = ~flagged & (rng.random(n) < audit_share)
    queries = Query.objects.bulk_create(
        [
            Query(question="q", sql="SELECT 1", warehouse=wh, source=QuerySource.LIVE, external_id=f"live-{i}")
            for i in range(n)
        ]
    )
    audits = {
        i: Query.objects.create(question="q", sql="SELECT 1", source=QuerySource.AUDIT, external_id=f"live-{i}")
        for i in np.flatnonzero(audited)
    }
    LiveQuery.objects.bulk_create(
        [
            LiveQuery(
                query=q,
                status=IngestStatus.FLAGGED if flagged[i] else IngestStatus.PASSED,
                audit_query=audits.get(i),
            )
            for i, q in enumerate(queries)
        ]
    )
    Verdict.objects.bulk_create(
        [
            Verdict(judge_version=version, query=q, decision="reject" if flagged[i] else "accept", model_reported=model)
            for i, q in enumerate(queries)
        ]
    )
    labels = [
        Label(
            query=q,
            decision="wrong" if wrong[i] else "correct",
            error_class="other" if wrong[i] else "",
            source=LabelSource.TRIAGE,
        )
        for i, q in enumerate(queries)
        if flagged[i]
    ]
    labels += [
        Label(
            query=a,
            decision="wrong" if wrong[i] else "correct",
            error_class="other" if wrong[i] else "",
            source=LabelSource.AUDIT,
        )
        for i, a in audits.items()
    ]
    Label.objects.bulk_create(labels)


def test_a_steady_judge_gets_estimates_near_the_truth_and_no_alert():
    version = factories.judge_version()
    policy_publish(changes={}, judge_versions=[version])
    calibrate(version)
    live_traffic(version)
    call_command("monitor_judges")
    snapshot = EstimateSnapshot.objects.get(judge_version=version)
    assert snapshot.corrected_error_rate == pytest.approx(0.2, abs=0.05)
    assert snapshot.audit_error_rate == pytest.approx(0.2, abs=0.05)
    assert snapshot.live_catch_rate == pytest.approx(0.6, abs=0.1)
    assert not Alert.objects.exists()


def test_a_retried_monitoring_pass_stores_each_judges_snapshot_once(monkeypatch):
    half_past = timezone.now().replace(minute=30)
    monkeypatch.setattr(timezone, "now", lambda: half_past)  # both deliveries in one hour, whenever the test runs
    steady, drifting = factories.judge_version(), factories.judge_version()
    policy_publish(changes={}, judge_versions=[steady, drifting])
    calibrate(steady)
    live_traffic(steady)
    first = monitor_judges.apply(task_id="monitor-1").get()
    # The broker redelivers the same pass (acks_late), or Celery retries it.
    second = monitor_judges.apply(task_id="monitor-1").get()
    assert first == second == 2
    assert EstimateSnapshot.objects.filter(judge_version=steady).count() == 1
    assert EstimateSnapshot.objects.filter(judge_version=drifting).count() == 1
    snapshot = EstimateSnapshot.objects.get(judge_version=steady)
    assert snapshot.hour == snapshot.computed_at.replace(minute=0, second=0, microsecond=0)


def test_a_second_snapshot_of_one_judge_in_one_hour_is_refused_by_the_database():
    version = factories.judge_version()
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)
    EstimateSnapshot.objects.create(judge_version=version, hour=hour)
    with pytest.raises(IntegrityError), transaction.atomic():
        EstimateSnapshot.objects.create(judge_version=version, hour=hour)


def test_a_drop_in_catch_rate_raises_one_alert_with_a_log_line(caplog):
    version = factories.judge_version()
    policy_publish(changes={}, judge_versions=[version])
    calibrate(version, catch=0.8)
    live_traffic(version, catch=0.3)
    with caplog.at_level(logging.WARNING, logger="triage.alerts"):
        call_command("monitor_judges")
        call_command("monitor_judges")
    alert = Alert.objects.get(kind=Alert.Kind.CATCH_DRIFT)
    assert alert.judge_version == version and "below calibration" in alert.message
    assert "triage alert catch_drift" in caplog.text


def test_a_changed_vendor_model_id_raises_an_alert():
    version = factories.judge_version()
    policy_publish(changes={}, judge_versions=[version])
    calibrate(version)
    live_traffic(version, n=200, model="sim-model-2")
    call_command("monitor_judges")
    alert = Alert.objects.get(kind=Alert.Kind.MODEL_CHANGED)
    assert alert.details == {"calibrated": "sim-model-1", "live": ["sim-model-2"]}


def test_a_drift_alert_names_its_cause_and_is_raised_again_only_after_it_was_resolved():
    version = factories.judge_version()
    policy_publish(changes={}, judge_versions=[version])
    calibrate(version, catch=0.8)
    live_traffic(version, catch=0.3)
    call_command("monitor_judges")
    alert = Alert.objects.get(kind=Alert.Kind.CATCH_DRIFT)
    assert alert.cause_key == f"catch_drift:judge_version:{version.pk}"
    alert_acknowledge(alert_id=alert.pk, user=None)
    call_command("monitor_judges")
    assert Alert.objects.filter(kind=Alert.Kind.CATCH_DRIFT).count() == 1  # acknowledged: still quiet
    alert_resolve(alert_id=alert.pk)
    call_command("monitor_judges")
    assert Alert.objects.filter(kind=Alert.Kind.CATCH_DRIFT).count() == 2
