"""Monitoring of live judges: load calibration and fresh labels, estimate, alert.

The arithmetic lives in `judges.metrics` (rates) and `triage.estimates` (prevalence,
drift); this module only loads numbers from the database, calls them, stores an
`EstimateSnapshot` and raises `Alert`s. A live judge's calibrated catch and false-reject
rates are its figures in the judges report (`judges.report`, same selector and
definitions as the dashboard): on the gold-set version of its latest completed calibration
run, over every completed run on that version (`CALIBRATION_RULE`, stated on the triage
dashboard). Its live rates are the same function, `judges.metrics.rates`, over the labelled
live queries weighted by 1 / P(labelled), with the same Wilson interval (on the
effective n), so the drift monitor compares like with like. The live window is read as
counts grouped by the database (`triage.live_counts`), never one row per live query.
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Max

from judges import metrics
from judges.calibration_cache import calibration_cached
from judges.models import CalibrationRun, Decision, Verdict
from judges.report import judge_entry
from judges.run_selection import judge_calibration_runs_get
from triage import estimates
from triage.alerts import alert_raise, alerts_resolve
from triage.live_counts import LiveSample, live_sample_load
from triage.live_error_rate import live_error_rate_build
from triage.live_fitness import live_fitness
from triage.models import Alert, EstimateSnapshot
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
    # The dashboard's default selection, loaded once for every live judge calibrated on it (judges.calibration_cache).
    data = calibration_cached(gold_set_version=version)
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
    rates = sample_live_rates(sample)
    # The live flag rate: the same definition over every live query the judge answered (no label needed).
    answered = [sample.flagged_by_judge, sample.judged - sample.flagged_by_judge]  # rejects, accepts
    flag_rate = metrics.rates(np.array([1.0, 0.0]), np.zeros(2, bool), weights=np.ones(2), counts=answered)
    audit = estimates.stratified_error_rate_of_counts(
        flagged_total=sample.flagged_total,
        unflagged_total=sample.unflagged_total,
        flagged_labelled=sample.labelled(True),
        flagged_wrong=sample.labelled_wrong(True),
        audit_labelled=sample.labelled(False),
        audit_wrong=sample.labelled_wrong(False),
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


def sample_live_rates(sample: LiveSample) -> estimates.LiveRates:
    """The judge's live rates on its labelled, answered queries, weighted by 1 / P(labelled), from grouped rows."""
    cells = sample.answered_labelled()
    weights = estimates.inverse_probability_weights(
        flagged=np.array([cell.flagged for cell in cells], dtype=bool),
        flagged_share_labelled=sample.flagged_share_labelled,
        audit_share=sample.audit_share_labelled,
    )
    return estimates.live_rates(
        rejected=np.array([cell.decision == Decision.REJECT for cell in cells], dtype=bool),
        wrong=np.array([cell.label == "wrong" for cell in cells], dtype=bool),
        weights=weights,
        counts=np.array([cell.count for cell in cells], dtype=np.int64),
    )


def live_judges_monitor(progress=None) -> list[tuple[EstimateSnapshot, list[Alert]]]:
    """Monitor every judge of the policy in force for drift (the hourly part of `monitor_judges`).

    `progress(done, total)`, if given, is told after each judge (the dashboard's "Compute it now").
    """
    policy = policy_current()
    if policy is None:
        return []
    versions = list(policy.judge_versions.select_related("judge").order_by("pk"))
    results = []
    for version in versions:
        results.append(judge_monitor(judge_version=version, policy=policy))
        if progress:
            progress(len(results), len(versions))
    return results


def policy_judges_fitness(policy) -> list[tuple[object, dict | None]]:
    """Return each live judge of the policy with its calibrated fitness (None without a calibration)."""
    versions = policy.judge_versions.select_related("judge").order_by("pk")
    return [(version, getattr(calibration_for_live_judge(version), "fitness", None)) for version in versions]
