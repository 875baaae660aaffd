"""Calibration metrics as pure numpy functions: no ORM, no I/O.

The input is an items × judges × repeats structure of decisions, reduced once to three
items × judges count matrices (rejects, accepts, errors). Every metric in the report, the
dashboard and the CLI is computed here, from those counts and the gold labels:

- `reject_prob(item)` = rejects / (rejects + accepts); an item whose verdicts are all
  `error` (or that has none) is *unjudged* for that judge and its reject_prob is NaN.
- rates are means of reject_prob over judged items of a stratum, with 95% Wilson
  intervals on n = number of judged items in the stratum.
- pairs and ensembles treat the judges' draws as independent given the item.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ACCEPT, REJECT, ERROR = 0, 1, 2
MISSING = -1
DECISION_CODES = {"accept": ACCEPT, "reject": REJECT, "error": ERROR}
Z95 = 1.959964
ENSEMBLE_RULES = ("any", "majority", "k_of_n", "stacked")


@dataclass(frozen=True)
class VerdictCounts:
    """Per item and judge: how many verdicts rejected, accepted and errored."""

    rejects: np.ndarray
    accepts: np.ndarray
    errors: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.rejects.shape

    @property
    def decided(self) -> np.ndarray:
        """Return the number of non-error verdicts per item and judge."""
        return self.rejects + self.accepts

    @property
    def judged(self) -> np.ndarray:
        """Return True where the judge has at least one non-error verdict on the item."""
        return self.decided > 0


def counts_from_decisions(decisions: np.ndarray) -> VerdictCounts:
    """Reduce an items × judges × repeats array of decision codes (MISSING = no verdict)."""
    decisions = np.asarray(decisions)
    return VerdictCounts(
        rejects=(decisions == REJECT).sum(axis=2),
        accepts=(decisions == ACCEPT).sum(axis=2),
        errors=(decisions == ERROR).sum(axis=2),
    )


def counts_from_rows(item_index, judge_index, decision, n_items: int, n_judges: int) -> VerdictCounts:
    """Reduce flat verdict rows (item index, judge index, decision code) with one bincount."""
    cell = np.asarray(judge_index, dtype=np.int64) * n_items + np.asarray(item_index, dtype=np.int64)
    key = cell * 3 + np.asarray(decision, dtype=np.int64)
    counts = np.bincount(key, minlength=n_items * n_judges * 3).reshape(n_judges, n_items, 3)
    return VerdictCounts(
        rejects=counts[:, :, REJECT].T.copy(),
        accepts=counts[:, :, ACCEPT].T.copy(),
        errors=counts[:, :, ERROR].T.copy(),
    )


def reject_prob(counts: VerdictCounts) -> np.ndarray:
    """Return the share of non-error verdicts that reject, per item × judge (NaN if unjudged)."""
    decided = counts.decided
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(decided > 0, counts.rejects / np.maximum(decided, 1), np.nan)


def mean_over(values: np.ndarray, mask: np.ndarray) -> tuple[float | None, int]:
    """Return (mean of values where mask and not NaN, how many were averaged)."""
    keep = mask & ~np.isnan(values)
    n = int(keep.sum())
    return (float(values[keep].mean()) if n else None), n


def wilson_interval(p: float | None, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Return the Wilson score interval for a proportion p observed on n items (None if n=0)."""
    if p is None or n <= 0:
        return None
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0))
    return (max(0.0, centre - half), min(1.0, centre + half))


def rates(probs: np.ndarray, is_wrong: np.ndarray) -> dict:
    """Return catch / false-reject / flag rates of one reject_prob column, with intervals."""
    catch, n_wrong = mean_over(probs, is_wrong)
    false_reject, n_correct = mean_over(probs, ~is_wrong)
    flag, n_judged = mean_over(probs, np.ones_like(is_wrong, dtype=bool))
    return {
        "catch_rate": catch,
        "catch_rate_ci95": wilson_interval(catch, n_wrong),
        "false_reject_rate": false_reject,
        "false_reject_rate_ci95": wilson_interval(false_reject, n_correct),
        "flag_rate": flag,
        "flag_rate_ci95": wilson_interval(flag, n_judged),
        "judged_wrong": n_wrong,
        "judged_correct": n_correct,
    }


def stability(rejects: np.ndarray, accepts: np.ndarray) -> dict:
    """Class judged items stable-reject / stable-accept / flaky and return the flip rate.

    The flip rate's denominator is items with at least two non-error verdicts: one draw
    cannot disagree with itself.
    """
    decided = rejects + accepts
    flaky = (rejects > 0) & (accepts > 0)
    repeated = decided >= 2
    n_repeated = int(repeated.sum())
    return {
        "flip_rate": float(flaky[repeated].mean()) if n_repeated else None,
        "items_with_repeats": n_repeated,
        "stable_reject": int(((rejects > 0) & (accepts == 0)).sum()),
        "stable_accept": int(((accepts > 0) & (rejects == 0)).sum()),
        "flaky": int(flaky.sum()),
    }


def catch_rates_by_error_class(probs: np.ndarray, is_wrong: np.ndarray, error_class: np.ndarray) -> dict:
    """Return {class: {"rate", "ci95", "n"}} for every error class present among wrong items.

    Wrong items without a class ("unclassified") are left out; the report counts them.
    """
    result = {}
    for slug in sorted(set(error_class[is_wrong].tolist()) - {"", "unclassified"}):
        rate, n = mean_over(probs, is_wrong & (error_class == slug))
        result[slug] = {"rate": rate, "ci95": wilson_interval(rate, n), "n": n}
    return result


def attempts_per_accepted(flag_rate: float | None) -> float | None:
    """Return expected attempts per accepted output when every rejection regenerates."""
    if flag_rate is None or flag_rate >= 1:
        return None
    return 1.0 / (1.0 - flag_rate)


def cost_per_accepted(flag_rate: float | None, review_cost: float, generation_cost: float) -> float | None:
    """Return attempts per accepted × (one generation + one review)."""
    attempts = attempts_per_accepted(flag_rate)
    return None if attempts is None else attempts * (generation_cost + review_cost)


def break_even_error_cost(
    cost_per_accepted_usd: float | None,
    catch_rate: float | None,
    baseline_cost_per_accepted_usd: float | None,
    baseline_catch_rate: float | None,
    wrong_share: float,
) -> float | None:
    """Return the escaped-error cost above which a judge pays for itself against a baseline.

    (its cost per accepted − the baseline's) ÷ (wrong share × (its catch − the baseline's));
    None when any input is missing or the denominator is not positive.
    """
    if None in (cost_per_accepted_usd, catch_rate, baseline_cost_per_accepted_usd, baseline_catch_rate):
        return None
    denominator = wrong_share * (catch_rate - baseline_catch_rate)
    if denominator <= 0:
        return None
    return (cost_per_accepted_usd - baseline_cost_per_accepted_usd) / denominator


def latency_percentiles(latencies: np.ndarray) -> tuple[float | None, float | None]:
    """Return (p50, p95) with numpy's default (linear) percentile; None without data."""
    latencies = np.asarray(latencies, dtype=float)
    if latencies.size == 0:
        return None, None
    p50, p95 = np.percentile(latencies, [50, 95])
    return float(p50), float(p95)


def majority_decisions(probs: np.ndarray) -> np.ndarray:
    """Return 1 (reject) where at least half the non-error verdicts reject, else 0.

    A tie counts as a reject: half the draws flagging the item is a flag worth reading.
    """
    return (probs >= 0.5).astype(np.int8)


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """Return Cohen's kappa of two binary decision vectors (None when undefined)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size == 0:
        return None
    observed = float((a == b).mean())
    pa, pb = a.mean(), b.mean()
    expected = float(pa * pb + (1 - pa) * (1 - pb))
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def pair_overlap(probs_a: np.ndarray, probs_b: np.ndarray, is_wrong: np.ndarray) -> dict:
    """Return miss-set overlap and the "reject if either rejects" rates of two judges.

    Only items judged by both count. Misses are expected counts: Σ (1 − reject_prob).
    """
    both = ~np.isnan(probs_a) & ~np.isnan(probs_b)
    wrong = both & is_wrong
    correct = both & ~is_wrong
    miss_a = 1 - probs_a[wrong]
    miss_b = 1 - probs_b[wrong]
    both_missed = float((miss_a * miss_b).sum())
    missed_either = float(miss_a.sum() + miss_b.sum()) - both_missed
    union = 1 - (1 - probs_a) * (1 - probs_b)
    return {
        "items": int(both.sum()),
        "missed_a": float(miss_a.sum()),
        "missed_b": float(miss_b.sum()),
        "both_missed": both_missed,
        "miss_jaccard": both_missed / missed_either if missed_either > 0 else None,
        "union_catch_rate": float(union[wrong].mean()) if wrong.any() else None,
        "union_false_reject_rate": float(union[correct].mean()) if correct.any() else None,
        "kappa": cohen_kappa(majority_decisions(probs_a[both]), majority_decisions(probs_b[both])),
    }


def poisson_binomial_at_least(probs: np.ndarray, k: int) -> np.ndarray:
    """Return, per row, P(at least k of the columns' independent Bernoulli draws are 1)."""
    probs = np.asarray(probs, dtype=float)
    n_items, n_members = probs.shape
    distribution = np.zeros((n_items, n_members + 1))
    distribution[:, 0] = 1.0
    for member in range(n_members):
        p = probs[:, member : member + 1]
        shifted = np.zeros_like(distribution)
        shifted[:, 1:] = distribution[:, :-1]
        distribution = distribution * (1 - p) + shifted * p
    return distribution[:, k:].sum(axis=1)


def threshold_for(rule: str, n_members: int, k: int | None = None) -> int:
    """Return how many members must reject for the ensemble to reject."""
    if rule == "any":
        return 1
    if rule == "majority":
        return n_members // 2 + 1
    if rule == "k_of_n":
        if k is None or not 1 <= k <= n_members:
            raise ValueError(f"k_of_n needs 1 <= k <= {n_members}, got {k!r}")
        return k
    raise ValueError(f"unknown ensemble rule {rule!r}; use one of {', '.join(ENSEMBLE_RULES)}")


def stacked_reject_prob(member_probs: np.ndarray, is_wrong: np.ndarray, cv=None, threshold: float = 0.5) -> np.ndarray:
    """Return out-of-fold decisions of a logistic regression over the members' reject_prob.

    Each item is predicted by a model fitted on the other folds only (cross_val_predict),
    so an item's own label never informs its own prediction. Classes are weighted
    "balanced" so the 0.5 threshold does not simply follow the share of wrong items.
    Returns 0/1 per item, or NaN everywhere when either class has fewer than two items.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    y = np.asarray(is_wrong, dtype=int)
    smallest_class = int(min(y.sum(), len(y) - y.sum()))
    if smallest_class < 2:
        return np.full(len(y), np.nan)
    if cv is None:
        cv = StratifiedKFold(n_splits=min(5, smallest_class), shuffle=True, random_state=0)
    model = LogisticRegression(class_weight="balanced")
    wrong_probability = cross_val_predict(model, member_probs, y, cv=cv, method="predict_proba")[:, 1]
    return (wrong_probability >= threshold).astype(float)


def ensemble_reject_prob(
    member_probs: np.ndarray, rule: str, is_wrong: np.ndarray | None = None, k: int | None = None, cv=None
) -> np.ndarray:
    """Return the ensemble's reject_prob per item (rows = items judged by every member)."""
    if rule == "stacked":
        return stacked_reject_prob(member_probs, is_wrong, cv=cv)
    return poisson_binomial_at_least(member_probs, threshold_for(rule, member_probs.shape[1], k))


def ensemble_metrics(
    probs: np.ndarray,
    is_wrong: np.ndarray,
    members: list[int],
    rule: str,
    *,
    cost_per_verdict: np.ndarray,
    item_latency: np.ndarray,
    generation_cost: float = 0.0,
    k: int | None = None,
    cv=None,
) -> dict:
    """Return rates, cost per accepted and latency of an ensemble of judge columns.

    Items judged by every member are scored. Every member reviews every attempt, so one
    attempt costs one generation plus each member's mean verdict cost. Latency per item is
    the max (parallel) or the sum (sequence) of the members' mean latency on it.
    """
    columns = probs[:, members]
    scored = ~np.isnan(columns).any(axis=1)
    combined = ensemble_reject_prob(columns[scored], rule, is_wrong=is_wrong[scored], k=k, cv=cv)
    result = rates(combined, is_wrong[scored])
    review_cost = float(np.sum(cost_per_verdict[members]))
    result["items"] = int(scored.sum())
    result["cost_per_attempt_usd"] = generation_cost + review_cost
    result["attempts_per_accepted"] = attempts_per_accepted(result["flag_rate"])
    result["cost_per_accepted_usd"] = cost_per_accepted(result["flag_rate"], review_cost, generation_cost)
    latency = item_latency[scored][:, members]
    parallel = np.nanmax(latency, axis=1) if latency.size else latency
    sequential = np.nansum(latency, axis=1) if latency.size else latency
    result["latency_ms_parallel_p50"], result["latency_ms_parallel_p95"] = latency_percentiles(parallel)
    result["latency_ms_sequential_p50"], result["latency_ms_sequential_p95"] = latency_percentiles(sequential)
    return result


def pareto_frontier(costs: list[float], catches: list[float]) -> list[bool]:
    """Mark points no other point beats on both cost (lower) and catch rate (higher)."""
    flags = []
    for i, (cost_i, catch_i) in enumerate(zip(costs, catches, strict=True)):
        dominated = any(
            cost_j <= cost_i and catch_j >= catch_i and (cost_j < cost_i or catch_j > catch_i)
            for j, (cost_j, catch_j) in enumerate(zip(costs, catches, strict=True))
            if j != i
        )
        flags.append(not dominated)
    return flags


def judge_summary(
    counts: VerdictCounts,
    column: int,
    is_wrong: np.ndarray,
    error_class: np.ndarray,
    *,
    cost_sum: float,
    verdicts: int,
    latencies: np.ndarray,
    generation_cost: float = 0.0,
) -> dict:
    """Return every per-judge figure of the report for one judge column.

    `verdicts` and `cost_sum` cover all of the judge's verdicts, errors included (a fault
    still costs a call); `latencies` is one value per verdict.
    """
    rejects = counts.rejects[:, column]
    accepts = counts.accepts[:, column]
    errors = counts.errors[:, column]
    probs = reject_prob(counts)[:, column]
    summary = {
        "verdicts": int(verdicts),
        "errors": int(errors.sum()),
        "unjudged": int(((rejects + accepts) == 0).sum() - ((rejects + accepts + errors) == 0).sum()),
        "missing": int(((rejects + accepts + errors) == 0).sum()),
    }
    summary.update(rates(probs, is_wrong))
    summary.update(stability(rejects, accepts))
    by_class = catch_rates_by_error_class(probs, is_wrong, error_class)
    summary["catch_rate_by_error_class"] = {slug: entry["rate"] for slug, entry in by_class.items()}
    summary["catch_rate_by_error_class_ci95"] = {slug: entry["ci95"] for slug, entry in by_class.items()}
    cost_per_verdict = cost_sum / verdicts if verdicts else 0.0
    summary["cost_per_verdict_usd"] = cost_per_verdict
    summary["attempts_per_accepted"] = attempts_per_accepted(summary["flag_rate"])
    summary["cost_per_accepted_usd"] = cost_per_accepted(summary["flag_rate"], cost_per_verdict, generation_cost)
    summary["latency_ms_p50"], summary["latency_ms_p95"] = latency_percentiles(latencies)
    return summary
