"""The live error rate three ways, each with its 95% interval and the assumption it rests on.

* **rogan_gladen** — the judge's flag rate corrected by its calibrated catch and false-reject
  rates (`triage.estimates.rogan_gladen_interval`): labelled = the calibration's judged gold
  items, unlabelled = the live queries the judge answered. Assumes the live traffic's errors
  look like the gold set's.
* **stratified** — the flagged stratum's error rate from analysts' decisions, the accepted
  stratum's from the audit sample, combined with their shares (`triage.estimates.
  stratified_error_rate`). Assumes analysts' decisions are right and the audit sample is a
  random draw of accepted queries.
* **ppi** — classical prediction-powered inference for a mean (Angelopoulos et al., 2023; not
  PPI++): with the audit sample drawn uniformly from all live traffic (`audit_scope = all`),
  labelled = the audited queries (label Y: wrong = 1), unlabelled = every other live query of
  the window, prediction f = the policy's flag. θ = mean f(unlabelled) + mean(Y − f(labelled)),
  its variance var(f unlabelled)/N + var(Y − f labelled)/n (population variances, as
  `ppi_py.ppi_mean_ci` with lam = 1), and the normal interval θ ± z·se.

Each is `{"estimate", "ci95", "n_labelled", "n_unlabelled"}`, or None with a reason
(`live_error_rate_reasons`). `ppi_mean_interval` is pure (the definition, on arrays);
`ppi_mean_interval_of_counts` computes it from the window's counts (`triage.live_counts`
`ppi_counts_load`), so no live query is held one by one.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from judges.metrics import Z95
from labelling.models import LabelDecision
from triage.live_counts import ppi_counts_load
from triage.models import AuditScope


def ppi_mean_interval(
    labels: np.ndarray, predictions_labelled: np.ndarray, predictions_unlabelled: np.ndarray, z: float = Z95
) -> tuple[float, float, float] | None:
    """Return (estimate, low, high) of the classical PPI mean; None without labelled or unlabelled items."""
    y = np.asarray(labels, dtype=float)
    f_labelled = np.asarray(predictions_labelled, dtype=float)
    f_unlabelled = np.asarray(predictions_unlabelled, dtype=float)
    n, big_n = y.size, f_unlabelled.size
    if n == 0 or big_n == 0:
        return None
    rectifier = y - f_labelled
    estimate = float(f_unlabelled.mean() + rectifier.mean())
    se = math.sqrt(float(f_unlabelled.var()) / big_n + float(rectifier.var()) / n)
    return estimate, estimate - z * se, estimate + z * se


def interval_entry(estimate, low, high, n_labelled: int, n_unlabelled: int) -> dict | None:
    """Return one estimate's entry; None when it has no estimate."""
    if estimate is None:
        return None
    return {
        "estimate": estimate,
        "ci95": None if low is None else [low, high],
        "n_labelled": int(n_labelled),
        "n_unlabelled": int(n_unlabelled),
    }


def ppi_mean_interval_of_counts(counts: dict[tuple[bool, str], int], z: float = Z95):
    """`ppi_mean_interval` on the window's counts {(flagged, audit label or ""): live queries}.

    Labelled = an audit label (Y: wrong = 1), prediction f = the flag; the means and
    population variances of f on the unlabelled and of Y − f on the labelled are moments of
    at most four values, so they are computed from the counts. None without labelled or
    unlabelled queries.
    """
    unlabelled = {flag: n for (flag, label), n in counts.items() if label == "" and n}
    rectifier = Counter()
    for (flag, label), n in counts.items():
        if label and n:
            rectifier[(1.0 if label == LabelDecision.WRONG else 0.0) - (1.0 if flag else 0.0)] += n
    big_n, n = sum(unlabelled.values()), sum(rectifier.values())
    if n == 0 or big_n == 0:
        return None
    f_mean = unlabelled.get(True, 0) / big_n
    f_var = sum(count * ((1.0 if flag else 0.0) - f_mean) ** 2 for flag, count in unlabelled.items()) / big_n
    r_mean = sum(value * count for value, count in rectifier.items()) / n
    r_var = sum(count * (value - r_mean) ** 2 for value, count in rectifier.items()) / n
    estimate = f_mean + r_mean
    se = math.sqrt(f_var / big_n + r_var / n)
    return estimate, estimate - z * se, estimate + z * se, n, big_n


def live_error_rate_build(*, policy, since, corrected, calibration_items: int, judged: int, audit, sample) -> dict:
    """Return {"live_error_rate": {...}, "live_error_rate_reasons": {...}} for one live judge.

    `corrected` and `audit` are the monitor's Rogan–Gladen and stratified Intervals, `sample`
    its `LiveSample`; the PPI estimate is read here when the policy audits all live traffic.
    """
    reasons = {}
    rogan_gladen = interval_entry(corrected.estimate, corrected.low, corrected.high, calibration_items, judged)
    if rogan_gladen is None:
        reasons["rogan_gladen"] = (
            "no calibration run, no live verdicts, or a judge no better than chance (catch rate not above "
            "its false-reject rate)"
        )
    labelled = sample.labelled(True) + sample.labelled(False)
    total = sample.flagged_total + sample.unflagged_total
    stratified = interval_entry(audit.estimate, audit.low, audit.high, labelled, total - labelled)
    if stratified is None:
        reasons["stratified"] = "a stratum with live queries has no labels yet (analysts' decisions or audit labels)"
    ppi = None
    if policy is None or policy.audit_scope != AuditScope.ALL:
        reasons["ppi"] = (
            "the audit sample is drawn from accepted queries only; PPI needs a uniform sample of all live "
            "traffic (set the policy's audit_scope to all)"
        )
    else:
        found = ppi_mean_interval_of_counts(ppi_counts_load(since=since))
        if found is None:
            reasons["ppi"] = "no audited live query has a label yet, or every live query is audited"
        else:
            ppi = interval_entry(*found)
    return {
        "live_error_rate": {"rogan_gladen": rogan_gladen, "stratified": stratified, "ppi": ppi},
        "live_error_rate_reasons": reasons,
    }
