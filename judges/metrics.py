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
  intervals use n = judged items of the stratum.
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

from labelling.agreement import cohen_kappa_from_confusion

ACCEPT, REJECT, ERROR = 0, 1, 2
MISSING = -1
DECISION_CODES = {"accept": ACCEPT, "reject": REJECT, "error": ERROR}
Z95 = 1.959964


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


def cost_per_accepted_interval(
    flag_rate_ci95: tuple[float, float] | None, review_cost: float, generation_cost: float = 0.0
) -> tuple[float, float] | None:
    """Return cost per accepted at the ends of the flag rate's 95% interval (None if unbounded)."""
    if not flag_rate_ci95:
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


def latency_percentiles(latencies: np.ndarray) -> tuple[float | None, float | None]:
    """Return (p50, p95) with numpy's default (linear) percentile; None without data.

    A latency that was not measured (NaN: an imported verdict without one) is left out.
    """
    latencies = np.asarray(latencies, dtype=float)
    latencies = latencies[~np.isnan(latencies)]
    if latencies.size == 0:
        return None, None
    p50, p95 = np.percentile(latencies, [50, 95])
    return float(p50), float(p95)


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
    cost_sum: float,
    verdicts: int,
    latencies: np.ndarray,
    generation_cost: float = 0.0,
) -> dict:
    """Return every per-judge figure of the report for one judge column.

    `verdicts` and `cost_sum` cover all of the judge's verdicts, errors included (a fault
    still costs a call); `latencies` is one value per verdict. `items` counts judged items,
    `repeats` the most verdicts (errors included) the judge has on one item, and
    `kappa_vs_gold` is `kappa_vs_gold` of its reject probabilities.
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
        "items": int(((rejects + accepts) > 0).sum()),
        "repeats": int((rejects + accepts + errors).max()) if len(rejects) else 0,
    }
    summary.update(rates(probs, is_wrong))
    summary.update(stability(rejects, accepts))
    summary["kappa_vs_gold"] = kappa_vs_gold(probs, is_wrong)
    by_class = catch_rates_by_error_class(probs, is_wrong, error_class)
    summary["catch_rate_by_error_class"] = {slug: entry["rate"] for slug, entry in by_class.items()}
    summary["catch_rate_by_error_class_ci95"] = {slug: entry["ci95"] for slug, entry in by_class.items()}
    cost_per_verdict = cost_sum / verdicts if verdicts else 0.0
    summary["cost_per_verdict_usd"] = cost_per_verdict
    summary["attempts_per_accepted"] = attempts_per_accepted(summary["flag_rate"])
    summary["cost_per_accepted_usd"] = cost_per_accepted(summary["flag_rate"], cost_per_verdict, generation_cost)
    summary["latency_ms_p50"], summary["latency_ms_p95"] = latency_percentiles(latencies)
    return summary


# An item's outcome for one judge, as the confusion matrix counts it.
OUTCOME_REJECT, OUTCOME_ACCEPT, OUTCOME_ERROR, OUTCOME_NONE = 0, 1, 2, -1
OUTCOMES = ("reject", "accept", "error")


def majority_outcomes(counts: VerdictCounts, column: int) -> np.ndarray:
    """Return each item's majority decision for one judge column: reject, accept, error or none.

    Reject and accept follow the tie rule (`majority_rejects`) over the answered verdicts;
    an item whose every verdict is an error is "error" (the checker failed, it did not
    decide); an item without any verdict is OUTCOME_NONE and is counted nowhere.
    """
    rejects = counts.rejects[:, column]
    answered = rejects + counts.accepts[:, column]
    outcomes = np.full(len(rejects), OUTCOME_NONE, dtype=np.int8)
    outcomes[(answered == 0) & (counts.errors[:, column] > 0)] = OUTCOME_ERROR
    outcomes[answered > 0] = OUTCOME_ACCEPT
    outcomes[(answered > 0) & majority_rejects(rejects, answered)] = OUTCOME_REJECT
    return outcomes


def confusion_matrix(outcomes: np.ndarray, is_wrong: np.ndarray) -> np.ndarray:
    """Return the 2×3 table of items: rows gold wrong, correct; columns reject, accept, error."""
    outcomes = np.asarray(outcomes)
    is_wrong = np.asarray(is_wrong, dtype=bool)
    return np.array(
        [[int(((outcomes == code) & gold).sum()) for code in range(len(OUTCOMES))] for gold in (is_wrong, ~is_wrong)]
    )
