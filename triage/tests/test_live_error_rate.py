"""The live error rate three ways: hand-computed PPI, the reference ppi_mean_ci, and monitor_judges' JSON."""

import io
import json
import math

import numpy as np
import pytest
from django.core.management import call_command
from ppi_py import ppi_mean_ci

from labelling.models import Label, LabelSource, Query, QuerySource
from triage.decision import TriageDecision
from triage.live_error_rate import ppi_mean_interval
from triage.models import AuditScope, IngestStatus, LiveQuery
from triage.pipeline import live_query_record_decision
from triage.policy import policy_publish
from triage.tests import factories
from triage.tests.test_monitoring import calibrate


def test_ppi_on_a_hand_computed_table():
    labels = [1, 0, 1, 0]
    predicted_labelled = [1, 0, 0, 0]
    predicted_unlabelled = [1, 0, 0, 0, 0, 1, 0, 0]
    estimate, low, high = ppi_mean_interval(labels, predicted_labelled, predicted_unlabelled)
    # mean f(unlabelled) = 2/8; mean(Y − f) = 1/4; variances 3/16 over 8 and 3/16 over 4.
    assert estimate == pytest.approx(0.5)
    se = math.sqrt(3 / 16 / 8 + 3 / 16 / 4)
    assert (low, high) == pytest.approx((0.5 - 1.959964 * se, 0.5 + 1.959964 * se))


def test_ppi_agrees_with_the_reference_implementation_to_1e_6():
    rng = np.random.default_rng(7)
    for n, big_n in ((40, 900), (300, 5000), (7, 20)):
        truth = rng.random(n + big_n) < 0.2
        flag = np.where(truth, rng.random(n + big_n) < 0.7, rng.random(n + big_n) < 0.1).astype(float)
        labels, labelled, unlabelled = truth[:n].astype(float), flag[:n], flag[n:]
        low, high = ppi_mean_ci(labels, labelled, unlabelled, alpha=0.05, lam=1)
        estimate, ours_low, ours_high = ppi_mean_interval(labels, labelled, unlabelled)
        assert ours_low == pytest.approx(float(np.ravel(low)[0]), abs=1e-6)
        assert ours_high == pytest.approx(float(np.ravel(high)[0]), abs=1e-6)
        assert estimate == pytest.approx(unlabelled.mean() + (labels - labelled).mean(), abs=1e-12)


def test_ppi_needs_both_labelled_and_unlabelled_queries():
    assert ppi_mean_interval([], [], [1, 0]) is None
    assert ppi_mean_interval([1], [1], []) is None


def uniform_audit_traffic(version, *, n=800, prevalence=0.25, audit_share=0.25, seed=3):
    """Live queries judged by `version`, an audit copy drawn uniformly from all of them, every flag decided."""
    rng = np.random.default_rng(seed)
    wh = factories.warehouse()
    wrong = rng.random(n) < prevalence
    flagged = np.where(wrong, rng.random(n) < 0.6, rng.random(n) < 0.1)
    audited = rng.random(n) < audit_share
    labels = []
    for i in range(n):
        query = Query.objects.create(
            question="q", sql="SELECT 1", warehouse=wh, source=QuerySource.LIVE, external_id=f"live-{i}"
        )
        audit = None
        if audited[i]:
            audit = Query.objects.create(
                question="q", sql="SELECT 1", source=QuerySource.AUDIT, external_id=f"live-{i}"
            )
            labels.append(Label(query=audit, decision="wrong" if wrong[i] else "correct", source=LabelSource.AUDIT))
        if flagged[i]:
            labels.append(Label(query=query, decision="wrong" if wrong[i] else "correct", source=LabelSource.TRIAGE))
        LiveQuery.objects.create(
            query=query, status=IngestStatus.FLAGGED if flagged[i] else IngestStatus.PASSED, audit_query=audit
        )
        factories.live_verdict(version, query, "reject" if flagged[i] else "accept")
    for label in labels:
        label.error_class = "other" if label.decision == "wrong" else ""
    Label.objects.bulk_create(labels)
    return wrong, flagged, audited


def monitor_json():
    out = io.StringIO()
    call_command("monitor_judges", "--format", "json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_monitor_judges_prints_three_estimates_and_ppi_matches_the_reference():
    version = factories.judge_version()
    policy_publish(changes={"audit_scope": AuditScope.ALL}, judge_versions=[version])
    calibrate(version)
    wrong, flagged, audited = uniform_audit_traffic(version)
    result = monitor_json()
    entry = result["judges"][0]
    rates = entry["live_error_rate"]
    assert set(rates) == {"rogan_gladen", "stratified", "ppi"}
    for name in ("rogan_gladen", "stratified", "ppi"):
        assert list(rates[name]) == ["estimate", "ci95", "n_labelled", "n_unlabelled"]
        low, high = rates[name]["ci95"]
        assert low <= rates[name]["estimate"] <= high
    ppi = rates["ppi"]
    labels, labelled, unlabelled = wrong[audited].astype(float), flagged[audited], flagged[~audited]
    low, high = ppi_mean_ci(labels, labelled.astype(float), unlabelled.astype(float), alpha=0.05, lam=1)
    assert ppi["ci95"] == pytest.approx([float(np.ravel(low)[0]), float(np.ravel(high)[0])], abs=1e-6)
    assert (ppi["n_labelled"], ppi["n_unlabelled"]) == (int(audited.sum()), int((~audited).sum()))
    assert ppi["estimate"] == pytest.approx(0.25, abs=0.08)
    # Stratified: every flagged query decided, the accepted stratum from its audited share.
    stratified = rates["stratified"]
    assert stratified["n_labelled"] == int(flagged.sum() + (audited & ~flagged).sum())
    share = flagged.mean()
    expected = share * wrong[flagged].mean() + (1 - share) * wrong[audited & ~flagged].mean()
    assert stratified["estimate"] == pytest.approx(expected)
    assert rates["rogan_gladen"]["n_labelled"] == 400 and rates["rogan_gladen"]["n_unlabelled"] == 800
    assert entry["live_error_rate_reasons"] == {}


@pytest.mark.django_db
def test_ppi_is_null_with_a_reason_when_the_audit_covers_accepted_queries_only():
    version = factories.judge_version()
    policy_publish(changes={}, judge_versions=[version])
    calibrate(version)
    uniform_audit_traffic(version, n=200)
    entry = monitor_json()["judges"][0]
    assert entry["live_error_rate"]["ppi"] is None
    assert "audit_scope" in entry["live_error_rate_reasons"]["ppi"]
    assert entry["live_error_rate"]["rogan_gladen"] is not None


@pytest.mark.django_db
@pytest.mark.parametrize(("scope", "audited"), [(AuditScope.ALL, True), (AuditScope.ACCEPTED, False)])
def test_with_audit_scope_all_the_pipeline_audits_flagged_queries_too(scope, audited):
    policy = factories.quiet_policy(audit_share=1.0, audit_scope=scope)
    live = factories.live_query(status=IngestStatus.PROCESSING)
    decision = TriageDecision(flagged=True, unjudged=False, reasons=["flagged"], judges_total=1, judges_answered=1)
    status = live_query_record_decision(
        live_id=live.pk, policy=policy, decision=decision, verifier_stored={}, preview={}
    )
    live.refresh_from_db()
    assert status == IngestStatus.FLAGGED
    assert (live.audit_query_id is not None) is audited


@pytest.mark.django_db
def test_the_triage_dashboard_shows_the_three_estimates(client_for):
    version = factories.judge_version()
    policy_publish(changes={"audit_scope": AuditScope.ALL}, judge_versions=[version])
    calibrate(version)
    uniform_audit_traffic(version, n=200)
    entry = monitor_json()["judges"][0]
    html = client_for("analyst").get("/triage/dashboard/").content.decode()
    assert 'id="live-error-rate-three-ways"' in html
    for key in ("rogan_gladen", "stratified", "ppi"):
        assert f'data-estimate="{key}">{entry["live_error_rate"][key]["estimate"]:.3f}' in html
