"""Calibration metrics as pure numpy functions: no ORM, no I/O. The definitions.

Every figure Docket shows — the dashboard, `judge_report`, the JSON download, triage's
error-rate correction and drift monitor — is computed by a function of this module or of
`judges.ensembles` (what judges miss and catch together), from arrays loaded once by
`judges.calibration_data`. README.md ("Definitions") states the same rules.

- **Verdicts.** Each (item, judge) has zero or more verdicts, one per draw (a run's repeat).
  `error` is a fault of the checker, never a decision: it is counted, never voted.
- **Reject probability** of an item for a judge, p = rejects / (rejects + accepts) over its
  answered verdicts; an item with no answered verdict is *unjudged* (NaN) for that judge.
- **Catch rate** = mean of p over judged wrong items; **false-reject rate** = mean of p over
  judged correct items; **flag rate** = mean of p over judged items. Each is the chance that
  one draw of the judge rejects an item drawn at random from the stratum. 95% Wilson
  intervals use n = judged items of the stratum. Live rates (triage's drift monitor) are
  the same function with each labelled live query weighted by 1 / P(it got a label):
  weighted means, and the same Wilson interval on the effective n (the simple-random-sample
  size with the weighted mean's variance), which is n itself when the weights are equal —
  so calibration and live rates are one definition.
- **Percentiles** (latencies, intervals from draws, queue times): `percentile`, numpy's
  linear interpolation between closest ranks; nothing else computes one.
- **k of n** (ensembles and the triage policy): 1 ≤ k ≤ n, else refused with the message of
  `k_of_n_problem`.
- **Cost**: a judge none of whose verdicts has a measured cost has an unknown cost (None),
  never $0, and every figure built on it (cost per accepted, ensembles, Pareto, marginal
  value, the loop lab) is unknown too.
- **Flip rate** = share of items with ≥ 2 answered verdicts on which the judge both
  accepted and rejected.
- **The tie rule** (one for the whole product): a majority needs strictly more than half
  of the answered votes; a tie is not a majority, so it does not reject. Errors neither
  vote nor count. The triage pipeline's majority, self-consistency's vote, the majority
  ensemble and an item's majority decision all use `majority_rejects`.
- **Cohen's κ** (`cohen_kappa`, one implementation: `labelling.agreement`'s confusion-matrix
  kappa) of two raters given as reject probabilities: the expected 2×2 table of one draw of
  each per item. With one verdict per item it is the textbook κ. `kappa_vs_gold` is κ
  between one draw of the judge and the gold label, over the judge's judged items.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from judges.class_sets import class_members
from labelling.agreement import cohen_kappa_from_confusion

ACCEPT, REJECT, ERROR = 0, 1, 2
MISSING = -1
DECISION_CODES = {"accept": ACCEPT, "reject": REJECT, "error": ERROR}
Z95 = 1.959964
# A wrong item or a reject without an error class: the product's one word for it, the same
# as labelling.models.UNCLASSIFIED (a test holds them equal; metrics stays free of the ORM).
UNCLASSIFIED = "unclassified"


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

    def decided_in(self, column: int) -> np.ndarray:
        """Return `decided` of one judge column, without computing the others."""
        return self.rejects[:, column] + self.accepts[:, column]

    @property
    def judged(self) -> np.ndarray:
        """Return True where the judge has at least one non-error verdict on the item."""
        return self.decided > 0


def counts_from_decisions(decisions: np.ndarray) -> VerdictCounts:
    """Reduce an items × judges × repeats array of decision codes (MISSING = no verdict)."""
    decisions = np.asarray(decisions)
    return VerdictCounts(*((decisions == code).sum(axis=2) for code in (REJECT, ACCEPT, ERROR)))


def counts_from_rows(item_index, judge_index, decision, n_items: int, n_judges: int) -> VerdictCounts:
    """Reduce flat verdict rows (item index, judge index, decision code): a bincount per judge, on its rows only."""
    item_index, judge_index, decision = (np.asarray(a) for a in (item_index, judge_index, decision))
    # int32: a count of verdicts on one item never nears 2**31, and half the memory at millions of items.
    counts = np.zeros((3, n_items, n_judges), dtype=np.int32)
    for judge in range(n_judges):
        mine = judge_index == judge
        key = item_index[mine].astype(np.int64, copy=False) * 3 + decision[mine]
        counts[:, :, judge] = np.bincount(key, minlength=n_items * 3).reshape(n_items, 3).T
    return VerdictCounts(rejects=counts[REJECT], accepts=counts[ACCEPT], errors=counts[ERROR])


def reject_prob(counts: VerdictCounts, column: int | None = None) -> np.ndarray:
    """Return the share of non-error verdicts that reject, per item × judge or of one `column` (NaN if unjudged)."""
    rejects = counts.rejects if column is None else counts.rejects[:, column]
    decided = counts.decided if column is None else counts.decided_in(column)
    return np.divide(rejects, decided, out=np.full(decided.shape, np.nan), where=decided > 0)


def mean_over(values: np.ndarray, mask: np.ndarray) -> tuple[float | None, int]:
    """Return (mean of values where mask and not NaN, how many were averaged)."""
    keep = mask & ~np.isnan(values)
    n = int(keep.sum())
    return (float(values[keep].mean()) if n else None), n


def weighted_mean_over(values: np.ndarray, mask: np.ndarray, weights, counts=None) -> tuple[float | None, float]:
    """Return (weighted mean of values where mask and not NaN, effective number of items).

    The effective n is how many items of a simple random sample would give the weighted
    mean's variance: p(1 − p) / V, V = Σ w²(y − p)² / (Σw)² (the linearised variance of a
    ratio estimate), so a Wilson interval on it keeps its 95% coverage under unequal
    weights. Equal weights are a simple random sample: n itself. When V is 0 (p is 0 or 1)
    Kish's (Σw)² / Σw² stands in. A weight of 0 leaves its item out; None and 0 when no
    positive weight is left. `counts`: how many items each row stands for (grouped rows).
    """
    weights = np.asarray(weights, dtype=float)
    n = np.ones(weights.size) if counts is None else np.asarray(counts, dtype=float)
    keep = mask & ~np.isnan(values) & (weights > 0) & (n > 0)
    w, y, n = weights[keep], values[keep], n[keep]
    total = float((n * w).sum())
    if total <= 0:
        return None, 0.0
    mean = float((n * w * y).sum() / total)
    kish = total * total / float((n * w * w).sum())
    if np.all(w == w[0]):
        return mean, float(n.sum())
    variance = float((n * w * w * (y - mean) ** 2).sum()) / (total * total)
    return mean, (mean * (1 - mean) / variance if variance > 0 else kish)


def wilson_interval(p: float | None, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Return the Wilson score interval for a proportion p observed on n items (None if n=0)."""
    if p is None or n <= 0:
        return None
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0))
    return (max(0.0, centre - half), min(1.0, centre + half))


def rates(probs: np.ndarray, is_wrong: np.ndarray, weights: np.ndarray | None = None, counts=None) -> dict:
    """Return catch / false-reject / flag rates of one reject_prob column, with intervals.

    Calibration passes no weights: plain means over judged items, Wilson on their number.
    The live monitor passes one weight per labelled query (1 / P(labelled)): weighted means,
    Wilson on the effective n of `weighted_mean_over` (n itself when the weights are equal),
    returned as `effective_wrong` / `effective_correct`; `counts`, the queries each row stands for.
    """
    probs = np.asarray(probs, dtype=float)
    is_wrong = np.asarray(is_wrong, dtype=bool)
    every = np.ones_like(is_wrong, dtype=bool)
    if weights is None:
        catch, n_wrong = mean_over(probs, is_wrong)
        false_reject, n_correct = mean_over(probs, ~is_wrong)
        flag, n_judged = mean_over(probs, every)
        effective = {}
        n_wrong_ci, n_correct_ci = n_wrong, n_correct
    else:
        catch, n_wrong_ci = weighted_mean_over(probs, is_wrong, weights, counts)
        false_reject, n_correct_ci = weighted_mean_over(probs, ~is_wrong, weights, counts)
        flag, n_judged = weighted_mean_over(probs, every, weights, counts)
        n = np.ones(probs.size, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
        n_wrong, n_correct = int(n[is_wrong & ~np.isnan(probs)].sum()), int(n[~is_wrong & ~np.isnan(probs)].sum())
        effective = {"effective_wrong": n_wrong_ci, "effective_correct": n_correct_ci}
    return {
        "catch_rate": catch,
        "catch_rate_ci95": wilson_interval(catch, n_wrong_ci),
        "false_reject_rate": false_reject,
        "false_reject_rate_ci95": wilson_interval(false_reject, n_correct_ci),
        "flag_rate": flag,
        "flag_rate_ci95": wilson_interval(flag, n_judged),
        "judged_wrong": n_wrong,
        "judged_correct": n_correct,
        **effective,
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

    An item with several classes ("a;b") counts in each (`judges.class_sets`). Wrong items
    without a class are left out (they are "unclassified": the loader names them so); the
    report counts them in `unclassified_wrong`.
    """
    result = {}
    for slug, members in class_members(error_class, is_wrong).items():
        rate, n = mean_over(probs, members)
        result[slug] = {"rate": rate, "ci95": wilson_interval(rate, n), "n": n}
    return result


def attempts_per_accepted(flag_rate: float | None) -> float | None:
    """Return expected attempts per accepted output when every rejection regenerates."""
    if flag_rate is None or flag_rate >= 1:
        return None
    return 1.0 / (1.0 - flag_rate)


def cost_per_accepted(flag_rate: float | None, review_cost: float | None, generation_cost: float) -> float | None:
    """Return attempts per accepted × (one generation + one review); None when the review cost is unknown."""
    attempts = attempts_per_accepted(flag_rate)
    if attempts is None or review_cost is None or math.isnan(review_cost):
        return None
    return attempts * (generation_cost + review_cost)


def cost_per_accepted_interval(
    flag_rate_ci95: tuple[float, float] | None, review_cost: float | None, generation_cost: float = 0.0
) -> tuple[float, float] | None:
    """Return cost per accepted at the ends of the flag rate's 95% interval (None if unbounded or unknown)."""
    if not flag_rate_ci95 or review_cost is None:
        return None
    ends = [cost_per_accepted(rate, review_cost, generation_cost) for rate in flag_rate_ci95]
    if any(end is None for end in ends):
        return None
    return (min(ends), max(ends))


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


def percentile(values, q, *, axis: int | None = None):
    """Return the q-th percentile(s) (q in 0..100) of values: the product's one percentile.

    Linear interpolation between the closest ranks (numpy's default method). Without
    `axis`: NaN values (not measured) are left out, a scalar q gives a float and a list of
    q a list, and None comes back when no value is left. With `axis`: an array, NaN left out
    along it.
    """
    values = np.asarray(values, dtype=float)
    if axis is not None:
        return np.nanpercentile(values, q, axis=axis)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    result = np.percentile(values, q)
    return float(result) if np.ndim(result) == 0 else [float(value) for value in result]


def latency_percentiles(latencies: np.ndarray) -> tuple[float | None, float | None]:
    """Return (p50, p95) by `percentile`; None without data.

    A latency that was not measured (NaN: an imported verdict without one) is left out.
    """
    found = percentile(latencies, [50, 95])
    return (None, None) if found is None else (found[0], found[1])


def k_of_n_problem(k, n: int) -> str | None:
    """Say why "at least k of n judges reject" cannot be used (None when 1 ≤ k ≤ n).

    The one check behind ensembles (`judges.ensembles.threshold_for`) and triage policies:
    a k above n could never be reached, so it is refused, never clamped.
    """
    if n < 1:
        return "k of n needs at least one judge; none is chosen"
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= n:
        return f"k must be between 1 and {n} (the number of judges chosen); got {k!r}"
    return None


def majority_rejects(rejects, answered):
    """Apply the product's one tie rule: reject on strictly more than half the answered votes.

    A tie is not a majority, so it does not reject; errors neither vote nor count (pass
    only answered votes). Works on scalars and arrays alike.
    """
    return np.asarray(rejects) * 2 > np.asarray(answered)


def majority_decisions(probs: np.ndarray) -> np.ndarray:
    """Return 1 where an item's majority of answered verdicts rejects (the tie rule), else 0."""
    with np.errstate(invalid="ignore"):
        return (np.asarray(probs) > 0.5).astype(np.int8)


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """Return Cohen's kappa of two raters given per item as reject probabilities (None if undefined).

    The 2×2 table is the expected one of a single draw of each rater per item; for 0/1
    inputs it is the ordinary confusion matrix and this is the textbook kappa. The kappa
    itself is `labelling.agreement.cohen_kappa_from_confusion`, the product's only one.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size == 0:
        return None
    confusion = np.array(
        [
            [np.sum((1 - a) * (1 - b)), np.sum((1 - a) * b)],
            [np.sum(a * (1 - b)), np.sum(a * b)],
        ]
    )
    return cohen_kappa_of_table(confusion)


def cohen_kappa_of_table(confusion: np.ndarray) -> float | None:
    """Return Cohen's kappa of a 2×2 (expected) table, None where it is undefined."""
    value = cohen_kappa_from_confusion(confusion)
    return None if math.isnan(value) else value


def kappa_vs_gold(probs: np.ndarray, is_wrong: np.ndarray) -> float | None:
    """Return Cohen's kappa between one draw of a judge and the gold labels, on its judged items."""
    judged = ~np.isnan(probs)
    return cohen_kappa(probs[judged], np.asarray(is_wrong, dtype=float)[judged])


def judge_summary(
    counts: VerdictCounts,
    column: int,
    is_wrong: np.ndarray,
    error_class: np.ndarray,
    *,
    cost_sum: float | None,
    verdicts: int,
    latencies: np.ndarray,
    generation_cost: float = 0.0,
) -> dict:
    """Return every per-judge figure of the report for one judge column.

    `verdicts` and `cost_sum` cover all of the judge's verdicts, errors included (a fault
    still costs a call); `cost_sum` is None or NaN when no verdict's cost was measured, and
    then every cost figure is None. `latencies` is one value per verdict. `items` counts judged items,
    `repeats` the most verdicts (errors included) the judge has on one item, and
    `kappa_vs_gold` is `kappa_vs_gold` of its reject probabilities.
    """
    rejects = counts.rejects[:, column]
    accepts = counts.accepts[:, column]
    errors = counts.errors[:, column]
    probs = reject_prob(counts, column)
    summary = {
        "verdicts": int(verdicts),
        "errors": int(errors.sum()),
        "unjudged": int(((rejects + accepts) == 0).sum() - ((rejects + accepts + errors) == 0).sum()),
        "missing": int(((rejects + accepts + errors) == 0).sum()),
        "items": int(((rejects + accepts) > 0).sum()),
        "repeats": int((rejects + accepts + errors).max()) if len(rejects) else 0,
    }
    summary.update(rates(probs, is_wrong))
    summary.update(stability(rejects, accepts))
    summary["kappa_vs_gold"] = kappa_vs_gold(probs, is_wrong)
    by_class = catch_rates_by_error_class(probs, is_wrong, error_class)
    summary["catch_rate_by_error_class"] = {slug: entry["rate"] for slug, entry in by_class.items()}
    summary["catch_rate_by_error_class_ci95"] = {slug: entry["ci95"] for slug, entry in by_class.items()}
    unknown_cost = cost_sum is None or math.isnan(cost_sum)
    cost_per_verdict = None if unknown_cost else (cost_sum / verdicts if verdicts else 0.0)
    summary["cost_per_verdict_usd"] = cost_per_verdict
    summary["attempts_per_accepted"] = attempts_per_accepted(summary["flag_rate"])
    summary["cost_per_accepted_usd"] = cost_per_accepted(summary["flag_rate"], cost_per_verdict, generation_cost)
    summary["latency_ms_p50"], summary["latency_ms_p95"] = latency_percentiles(latencies)
    return summary
