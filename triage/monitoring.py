"""Monitoring of live judges: load calibration and fresh labels, estimate, alert.

The arithmetic lives in `judges.metrics` (rates) and `triage.estimates` (prevalence,
drift); this module only loads numbers from the database, calls them, stores an
`EstimateSnapshot` and raises `Alert`s. A live judge's calibrated catch and false-reject
rates are its figures in the judges report (`judges.report`, same selector and
definitions as the dashboard): on the gold-set version of its latest completed calibration
run, over every completed run on that version (`CALIBRATION_RULE`, stated on the triage
dashboard). Its live rates are the same function, `judges.metrics.rates`, over the labelled
live queries weighted by 1 / P(labelled), with the same Wilson interval (on the
effective n), so the drift monitor compares like with like.
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Max

from judges import metrics
from judges.calibration_data import load_calibration
from judges.models import CalibrationRun, Decision, Verdict
from judges.report import judge_entry
from judges.run_selection import judge_calibration_runs_get
from labelling.models import Label
from triage import estimates
from triage.alerts import alert_raise, alerts_resolve
from triage.live_error_rate import live_error_rate_build
from triage.live_fitness import live_fitness
from triage.models import Alert, EstimateSnapshot, IngestStatus, LiveQuery
from triage.policy import policy_current

CALIBRATION_RULE = (
    "Calibrated rates are each judge's figures in the judges report on the gold-set version of its latest "
    "completed calibration run, over every completed run on that version (all repeats), as the comparison "
    "dashboard shows them by default."
)


@dataclass(frozen=True)
class Calibration:
    """A live judge's calibrated rates, as the judges report states them."""

    catch: estimates.Interval
    false_reject: estimates.Interval
    wrong: int  # judged wrong items behind the catch rate
    correct: int  # judged correct items behind the false-reject rate
    model: str
    calibrated_at: object  # datetime or None
    gold_set_version: str
    runs: list[int]
    fitness: dict | None = None  # the report's {"level", "reasons", "needed"} (judges.fitness)


def calibration_for_live_judge(judge_version) -> Calibration | None:
    """Return the judge version's calibrated rates from the report (None without a completed run)."""
    version, run_ids = judge_calibration_runs_get(judge_version=judge_version)
    if version is None:
        return None
    data = load_calibration(gold_set_version=version)
    column = next((i for i, judge in enumerate(data.judges) if judge.id == judge_version.pk), None)
    if column is None:
        return None
    entry = judge_entry(data, column, 0.0)
    runs = entry["runs"]
    models = Counter(
        dict(
            Verdict.objects.filter(run_id__in=runs, judge_version=judge_version)
            .exclude(decision=Decision.ERROR)
            .exclude(model_reported="")
            .values_list("model_reported")
            .annotate(n=Count("id"))
            .order_by()
        )
    )
    finished = CalibrationRun.objects.filter(pk__in=runs).aggregate(
        finished=Max("finished_at"), created=Max("created_at")
    )
    return Calibration(
        catch=estimates.interval_of(entry["catch_rate"], entry["catch_rate_ci95"]),
        false_reject=estimates.interval_of(entry["false_reject_rate"], entry["false_reject_rate_ci95"]),
        wrong=entry["judged_wrong"],
        correct=entry["judged_correct"],
        model=models.most_common(1)[0][0] if models else "",
        calibrated_at=finished["finished"] or finished["created"],
        gold_set_version=str(version),
        runs=runs,
        fitness=entry.get("fitness"),
    )


@dataclass(frozen=True)
class LiveSample:
    judged: int
    flagged_by_judge: int
    flagged_total: int
    unflagged_total: int
    # One entry per live query the judge answered: did it reject (the live flag rate's items).
    answered_rejects: np.ndarray
    # One row per labelled live query the judge answered.
    rejected: np.ndarray
    wrong: np.ndarray
    in_flagged_stratum: np.ndarray
    flagged_share_labelled: float
    audit_share_labelled: float
    # Labels regardless of this judge, for the audit estimate.
    flagged_wrong: np.ndarray
    audit_wrong: np.ndarray
    models: Counter


def _current_label_decisions(query_ids) -> dict[int, str]:
    """Return each query's latest current correct/wrong label (unsure labels say nothing)."""
    decisions = {}
    for query_id, decision in (
        Label.objects.filter(query_id__in=query_ids, is_current=True, decision__in=["correct", "wrong"])
        .order_by("created_at")
        .values_list("query_id", "decision")
    ):
        decisions[query_id] = decision
    return decisions


def live_sample_load(*, judge_version, since) -> LiveSample:
    """Load live verdicts and the labels that arrived for live queries since `since`."""
    live = LiveQuery.objects.filter(status__in=[IngestStatus.FLAGGED, IngestStatus.PASSED])
    if since is not None:
        live = live.filter(created_at__gte=since)
    rows = list(live.values_list("pk", "status", "audit_query_id"))
    flagged_ids = [pk for pk, status, _ in rows if status == IngestStatus.FLAGGED]
    passed = [(pk, audit) for pk, status, audit in rows if status == IngestStatus.PASSED]
    triage_labels = _current_label_decisions(flagged_ids)
    audit_by_live = {pk: audit for pk, audit in passed if audit}
    audit_labels_raw = _current_label_decisions(list(audit_by_live.values()))
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
    return LiveSample(
        judged=len(answered),
        flagged_by_judge=sum(1 for d in answered.values() if d == Decision.REJECT),
        flagged_total=len(flagged_ids),
        unflagged_total=len(passed),
        answered_rejects=np.array([d == Decision.REJECT for d in answered.values()], dtype=bool),
        rejected=np.array([answered[q] == Decision.REJECT for q, _, _ in labelled], dtype=bool),
        wrong=np.array([label == "wrong" for _, label, _ in labelled], dtype=bool),
        in_flagged_stratum=np.array([stratum for _, _, stratum in labelled], dtype=bool),
        flagged_share_labelled=len(triage_labels) / len(flagged_ids) if flagged_ids else 0.0,
        audit_share_labelled=len(audit_labels) / len(passed) if passed else 0.0,
        flagged_wrong=np.array([d == "wrong" for d in triage_labels.values()], dtype=bool),
        audit_wrong=np.array([d == "wrong" for d in audit_labels.values()], dtype=bool),
        models=Counter(m for _, (_, m) in verdicts.items() if m),
    )


def drift_alert(*, kind: str, judge_version, message: str, details: dict, found: bool, cause: str = ""):
    """Raise a judge's alert of this kind when `found`, else resolve it (the drift went away)."""
    prefix = f"{kind}:judge_version:{judge_version.pk}"
    cause_key = f"{prefix}:{cause}" if cause else prefix
    alerts_resolve(cause_prefix=prefix, keep={cause_key} if found else set())
    if not found:
        return None
    return alert_raise(kind=kind, cause_key=cause_key, judge_version=judge_version, message=message, details=details)


def judge_monitor(*, judge_version, policy) -> tuple[EstimateSnapshot, list[Alert]]:
    """Re-measure one live judge, store its estimates, and alert on drift or a model change."""
    calibration = calibration_for_live_judge(judge_version)
    since = calibration.calibrated_at if calibration else None
    sample = live_sample_load(judge_version=judge_version, since=since)
    weights = estimates.inverse_probability_weights(
        flagged=sample.in_flagged_stratum,
        flagged_share_labelled=sample.flagged_share_labelled,
        audit_share=sample.audit_share_labelled,
    )
    rates = estimates.live_rates(rejected=sample.rejected, wrong=sample.wrong, weights=weights)
    # The live flag rate: the same definition over every live query the judge answered (no label needed).
    flag_rate = metrics.rates(sample.answered_rejects.astype(float), np.zeros(sample.answered_rejects.size, bool))
    audit = estimates.stratified_error_rate(
        flagged_total=sample.flagged_total,
        unflagged_total=sample.unflagged_total,
        flagged_wrong=sample.flagged_wrong,
        audit_wrong=sample.audit_wrong,
    )
    corrected = estimates.Interval(None, None, None)
    alerts = []
    drifted = []  # the rates found drifting, for the live fitness
    if calibration is not None:
        corrected = estimates.rogan_gladen_interval(
            flagged=sample.flagged_by_judge,
            judged=sample.judged,
            catch_rate=calibration.catch.estimate,
            wrong=calibration.wrong,
            false_reject_rate=calibration.false_reject.estimate,
            correct=calibration.correct,
        )
        checks = [
            (Alert.Kind.CATCH_DRIFT, "catch rate", calibration.catch, rates.catch, rates.effective_wrong),
            (
                Alert.Kind.FALSE_REJECT_DRIFT,
                "false-reject rate",
                calibration.false_reject,
                rates.false_reject,
                rates.effective_correct,
            ),
        ]
        for kind, name, calibrated, live, effective_n in checks:
            drift = estimates.detect_drift(calibration=calibrated, live=live, effective_n=effective_n)
            if drift.drifted:
                drifted.append(name)
            alerts.append(
                drift_alert(
                    kind=kind,
                    judge_version=judge_version,
                    message=f"{judge_version} {name}: {drift.reason}",
                    details={"calibration_runs": calibration.runs},
                    found=drift.drifted,
                )
            )
        changed = sorted(m for m in sample.models if calibration.model and m != calibration.model)
        alerts.append(
            drift_alert(
                kind=Alert.Kind.MODEL_CHANGED,
                judge_version=judge_version,
                message=f"{judge_version} calibrated on {calibration.model!r} now reports {', '.join(changed)}",
                details={"calibrated": calibration.model, "live": changed},
                found=bool(changed),
                cause=",".join(changed),
            )
        )
    # The live error rate three ways (triage.live_error_rate), stored with the snapshot.
    live_error_rate = live_error_rate_build(
        policy=policy,
        since=since,
        corrected=corrected,
        calibration_items=(calibration.wrong + calibration.correct) if calibration else 0,
        judged=sample.judged,
        audit=audit,
        sample=sample,
    )
    snapshot = EstimateSnapshot.objects.store_for_hour(
        judge_version=judge_version,
        policy=policy,
        window_start=since,
        live_queries=sample.judged,
        flag_rate=flag_rate["flag_rate"],
        calibrated_catch_rate=calibration.catch.estimate if calibration else None,
        calibrated_false_reject_rate=calibration.false_reject.estimate if calibration else None,
        live_catch_rate=rates.catch.estimate,
        live_false_reject_rate=rates.false_reject.estimate,
        labelled=rates.labelled,
        corrected_error_rate=corrected.estimate,
        corrected_low=corrected.low,
        corrected_high=corrected.high,
        audit_error_rate=audit.estimate,
        audit_low=audit.low,
        audit_high=audit.high,
        details={
            "flagged_total": sample.flagged_total,
            "unflagged_total": sample.unflagged_total,
            "flagged_share_labelled": sample.flagged_share_labelled,
            "audit_share_labelled": sample.audit_share_labelled,
            "calibration_gold_set_version": calibration.gold_set_version if calibration else None,
            "calibration_runs": calibration.runs if calibration else [],
            **live_error_rate,
            # Its calibrated fitness, one level lower while drift is found (triage.live_fitness).
            "live_fitness": live_fitness(calibration.fitness if calibration else None, drifted),
        },
    )
    return snapshot, [a for a in alerts if a is not None]


def live_judges_monitor() -> list[tuple[EstimateSnapshot, list[Alert]]]:
    """Monitor every judge of the policy in force for drift (the hourly part of `monitor_judges`)."""
    policy = policy_current()
    if policy is None:
        return []
    versions = policy.judge_versions.select_related("judge").order_by("pk")
    return [judge_monitor(judge_version=version, policy=policy) for version in versions]


def policy_judges_fitness(policy) -> list[tuple[object, dict | None]]:
    """Return each live judge of the policy with its calibrated fitness (None without a calibration)."""
    versions = policy.judge_versions.select_related("judge").order_by("pk")
    return [(version, getattr(calibration_for_live_judge(version), "fitness", None)) for version in versions]
