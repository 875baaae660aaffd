"""The live figures from grouped counts equal the figures from one row per live query (issue 33).

The drift monitor and the live error rate used to hold every live query of the window in
Python; they now read counts grouped by the database (`triage.live_counts`). The old
computation is kept here as the twin, and both are run on random live tables: unsure and
superseded labels, audit copies, several labels per query, errors and missing verdicts.
"""

from collections import Counter

import numpy as np
import pytest
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

from judges import metrics
from judges.models import CalibrationRun, Decision, Verdict
from labelling.models import Label, LabelDecision, LabelSource, Query, QuerySource
from triage import estimates
from triage.live_counts import live_sample_load
from triage.live_error_rate import ppi_mean_interval
from triage.models import AuditScope, EstimateSnapshot, IngestStatus, LiveQuery
from triage.monitoring import calibration_for_live_judge, live_judges_monitor
from triage.policy import policy_publish
from triage.tests import factories
from triage.tests.test_monitoring import calibrate

pytestmark = pytest.mark.django_db


def random_live_table(version, rng, n: int) -> None:
    """Live queries flagged or passed, some audited; labels of every kind; the judge's verdicts or none."""
    wh = factories.warehouse()
    statuses = rng.choice([IngestStatus.FLAGGED, IngestStatus.PASSED, IngestStatus.UNJUDGED], n, p=[0.3, 0.6, 0.1])
    queries = Query.objects.bulk_create(
        [
            Query(question="q", sql="SELECT 1", warehouse=wh, source=QuerySource.LIVE, external_id=f"r-{i}")
            for i in range(n)
        ]
    )
    audited = rng.random(n) < 0.4
    audits = {
        i: Query.objects.create(question="q", sql="SELECT 1", source=QuerySource.AUDIT, external_id=f"r-{i}")
        for i in np.flatnonzero(audited)
    }
    LiveQuery.objects.bulk_create(
        [LiveQuery(query=q, status=statuses[i], audit_query=audits.get(i)) for i, q in enumerate(queries)]
    )
    verdicts = []
    for query in queries:
        choice = rng.choice(["reject", "accept", "error", "none"], p=[0.3, 0.5, 0.1, 0.1])
        if choice != "none":
            model = rng.choice(["sim-model-1", "sim-model-1", "sim-model-2", ""])
            verdicts.append(Verdict(judge_version=version, query=query, decision=choice, model_reported=model))
    Verdict.objects.bulk_create(verdicts)
    labels = []
    for target in [*queries, *audits.values()]:
        for _ in range(int(rng.integers(0, 3))):
            decision = rng.choice([LabelDecision.WRONG, LabelDecision.CORRECT, LabelDecision.UNSURE])
            labels.append(
                Label(
                    query=target,
                    decision=decision,
                    error_class="other" if decision == LabelDecision.WRONG else "",
                    source=LabelSource.AUDIT,
                    is_current=bool(rng.random() < 0.8),
                )
            )
    # One at a time: each its own created_at, so "the latest label" is one label.
    for label in labels:
        label.save()


# --- the twin: the computation as it was, one row per live query ----------------------------


def current_label_decisions(query_ids) -> dict[int, str]:
    decisions = {}
    for query_id, decision in (
        Label.objects.filter(query_id__in=query_ids, is_current=True, decision__in=["correct", "wrong"])
        .order_by("created_at")
        .values_list("query_id", "decision")
    ):
        decisions[query_id] = decision
    return decisions


def twin_figures(judge_version, since, calibration) -> dict:
    live = LiveQuery.objects.filter(status__in=[IngestStatus.FLAGGED, IngestStatus.PASSED])
    if since is not None:
        live = live.filter(created_at__gte=since)
    rows = list(live.values_list("pk", "status", "audit_query_id"))
    flagged_ids = [pk for pk, status, _ in rows if status == IngestStatus.FLAGGED]
    passed = [(pk, audit) for pk, status, audit in rows if status == IngestStatus.PASSED]
    triage_labels = current_label_decisions(flagged_ids)
    audit_by_live = {pk: audit for pk, audit in passed if audit}
    audit_labels_raw = current_label_decisions(list(audit_by_live.values()))
    audit_labels = {pk: audit_labels_raw[a] for pk, a in audit_by_live.items() if a in audit_labels_raw}
    verdicts = {
        query_id: (decision, model)
        for query_id, decision, model in Verdict.objects.filter(
            judge_version=judge_version, run__isnull=True, query_id__in=[r[0] for r in rows]
        ).values_list("query_id", "decision", "model_reported")
    }
    answered = {q: d for q, (d, _) in verdicts.items() if d in (Decision.ACCEPT, Decision.REJECT)}
    labelled = [(q, triage_labels[q], True) for q in flagged_ids if q in triage_labels] + [
        (q, audit_labels[q], False) for q, _ in passed if q in audit_labels
    ]
    labelled = [(q, label, stratum) for q, label, stratum in labelled if q in answered]
    flagged_share = len(triage_labels) / len(flagged_ids) if flagged_ids else 0.0
    audit_share = len(audit_labels) / len(passed) if passed else 0.0
    weights = estimates.inverse_probability_weights(
        flagged=np.array([stratum for *_, stratum in labelled], dtype=bool),
        flagged_share_labelled=flagged_share,
        audit_share=audit_share,
    )
    rates = estimates.live_rates(
        rejected=np.array([answered[q] == Decision.REJECT for q, _, _ in labelled], dtype=bool),
        wrong=np.array([label == "wrong" for _, label, _ in labelled], dtype=bool),
        weights=weights,
    )
    answered_rejects = np.array([d == Decision.REJECT for d in answered.values()], dtype=bool)
    flag_rate = metrics.rates(answered_rejects.astype(float), np.zeros(answered_rejects.size, bool))["flag_rate"]
    audit = estimates.stratified_error_rate(
        flagged_total=len(flagged_ids),
        unflagged_total=len(passed),
        flagged_wrong=np.array([d == "wrong" for d in triage_labels.values()], dtype=bool),
        audit_wrong=np.array([d == "wrong" for d in audit_labels.values()], dtype=bool),
    )
    corrected = estimates.rogan_gladen_interval(
        flagged=int(answered_rejects.sum()),
        judged=len(answered),
        catch_rate=calibration.catch.estimate,
        wrong=calibration.wrong,
        false_reject_rate=calibration.false_reject.estimate,
        correct=calibration.correct,
    )
    # PPI: every live query of the window, labelled when its audit copy has a label.
    decisions = current_label_decisions([copy for _, _, copy in rows if copy])
    labels, labelled_flags, unlabelled_flags = [], [], []
    for _, status, copy in rows:
        flag = 1.0 if status == IngestStatus.FLAGGED else 0.0
        if copy in decisions:
            labels.append(1.0 if decisions[copy] == "wrong" else 0.0)
            labelled_flags.append(flag)
        else:
            unlabelled_flags.append(flag)
    return {
        "live_queries": len(answered),
        "labelled": rates.labelled,
        "flag_rate": flag_rate,
        "live_catch_rate": rates.catch.estimate,
        "live_false_reject_rate": rates.false_reject.estimate,
        "effective": (rates.effective_wrong, rates.effective_correct),
        "catch_ci": (rates.catch.low, rates.catch.high),
        "audit": (audit.estimate, audit.low, audit.high),
        "corrected": (corrected.estimate, corrected.low, corrected.high),
        "ppi": ppi_mean_interval(labels, labelled_flags, unlabelled_flags),
        "models": {m for _, (_, m) in verdicts.items() if m},
    }


def approx(value):
    return pytest.approx(value, rel=1e-12, abs=1e-15) if value is not None else None


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_the_monitor_from_counts_equals_the_monitor_from_rows(seed):
    rng = np.random.default_rng(seed)
    version = factories.judge_version()
    policy_publish(changes={"audit_scope": AuditScope.ALL}, judge_versions=[version])
    calibrate(version, wrong=60, correct=140)
    random_live_table(version, rng, n=int(rng.integers(150, 260)))
    calibration = calibration_for_live_judge(version)
    twin = twin_figures(version, calibration.calibrated_at, calibration)

    live_judges_monitor()
    snapshot = EstimateSnapshot.objects.get(judge_version=version)
    assert snapshot.live_queries == twin["live_queries"]
    assert snapshot.labelled == twin["labelled"]
    for name in ("flag_rate", "live_catch_rate", "live_false_reject_rate"):
        assert getattr(snapshot, name) == approx(twin[name]), name
    assert (snapshot.audit_error_rate, snapshot.audit_low, snapshot.audit_high) == twin["audit"]
    corrected = (snapshot.corrected_error_rate, snapshot.corrected_low, snapshot.corrected_high)
    assert corrected == twin["corrected"]
    ppi = snapshot.details["live_error_rate"]["ppi"]
    estimate, low, high = twin["ppi"]
    assert ppi["estimate"] == approx(estimate) and ppi["ci95"] == [approx(low), approx(high)]
    sample = live_sample_load(judge_version=version, since=calibration.calibrated_at)
    assert set(sample.models) == twin["models"]
    rates = estimates.live_rates(
        rejected=np.array([c.decision == "reject" for c in sample.answered_labelled()]),
        wrong=np.array([c.label == "wrong" for c in sample.answered_labelled()]),
        weights=estimates.inverse_probability_weights(
            flagged=np.array([c.flagged for c in sample.answered_labelled()]),
            flagged_share_labelled=sample.flagged_share_labelled,
            audit_share=sample.audit_share_labelled,
        ),
        counts=np.array([c.count for c in sample.answered_labelled()]),
    )
    assert (rates.effective_wrong, rates.effective_correct) == (
        approx(twin["effective"][0]),
        approx(twin["effective"][1]),
    )
    assert (rates.catch.low, rates.catch.high) == (approx(twin["catch_ci"][0]), approx(twin["catch_ci"][1]))


def monitor_statements(version) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        live_judges_monitor()
    EstimateSnapshot.objects.filter(judge_version=version).delete()
    return [query["sql"] for query in captured.captured_queries]


def test_the_monitor_groups_live_queries_in_the_database_and_its_cost_does_not_follow_traffic():
    rng = np.random.default_rng(3)
    version = factories.judge_version()
    policy_publish(changes={"audit_scope": AuditScope.ALL}, judge_versions=[version])
    calibrate(version, wrong=20, correct=20)
    random_live_table(version, rng, n=30)
    few = monitor_statements(version)
    random_live_table(version, rng, n=300)
    many = monitor_statements(version)
    # Alerts may differ (more labels find drift); the reads of the live window do not.
    for statements in (few, many):
        on_live = [sql for sql in statements if "triage_livequery" in sql]
        assert len(on_live) == 3  # the judge's window, its reported models, PPI's window
        for sql in on_live:
            assert "GROUP BY" in sql.upper() and "COUNT(" in sql.upper(), sql
    # Each grouped read returns at most a few dozen rows, whatever the traffic: (status, label, verdict).
    sample = live_sample_load(judge_version=version, since=None)
    assert len(sample.cells) <= 2 * 3 * 4
    assert (
        sample.flagged_total + sample.unflagged_total == LiveQuery.objects.exclude(status=IngestStatus.UNJUDGED).count()
    )
    assert Counter(sample.models) == Counter(
        dict(
            Verdict.objects.filter(judge_version=version, run__isnull=True)
            .exclude(model_reported="")
            .exclude(query__live__status=IngestStatus.UNJUDGED)
            .values_list("model_reported")
            .annotate(n=Count("id"))
            .order_by()
        )
    )


def test_live_judges_calibrated_on_one_version_share_one_load_of_its_verdicts():
    versions = [factories.judge_version() for _ in range(3)]
    policy_publish(changes={}, judge_versions=versions)
    calibrate(versions[0], wrong=10, correct=10)
    # The other two judged the same gold-set version in the same run.
    run = CalibrationRun.objects.get(judge_versions=versions[0])
    for other in versions[1:]:
        run.judge_versions.add(other)
        Verdict.objects.bulk_create(
            Verdict(judge_version=other, query_id=verdict.query_id, run=run, decision=verdict.decision)
            for verdict in Verdict.objects.filter(run=run, judge_version=versions[0])
        )
    with CaptureQueriesContext(connection) as captured:
        snapshots = live_judges_monitor()
    assert len(snapshots) == 3
    # The runs' verdict sums, read by each load (the items' and the verdict rows' reads go round
    # Django's cursor on PostgreSQL, so it is this ORM query that is counted): once for the three judges.
    # (The cache's fingerprint of the runs, read per judge, names the sums only in a subquery.)
    loads = [
        query["sql"] for query in captured.captured_queries if query["sql"].startswith('SELECT "judges_runverdictsums"')
    ]
    assert len(loads) == 1, loads
