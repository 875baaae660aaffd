"""Per-judge figures beside the rates: per category, precision, NPV and class accuracy. Pure numpy.

All of them, like κ, rest on the expected table of one draw per item: an item judged with
reject probability p is p of a reject and 1 − p of an accept.

- **Catch rate by category** = mean of p over judged wrong items with at least one class in
  the category (an item counts once per category it has; categories overlap).
- **Precision** = Σ over judged wrong items of p ÷ Σ over judged items of p: of a judge's
  rejects, the share that are on wrong items.
- **NPV** (negative predictive value) = Σ over judged correct items of (1 − p) ÷ Σ over judged
  items of (1 − p): of its accepts, the share that are on correct items.
- **Class accuracy** = Σ over judged classified wrong items of m ÷ Σ over them of p, where m is
  the share of the item's answered verdicts that reject with a guess naming one of the item's
  classes (through the taxonomy and its `maps_to`); a reject without a guess, or with a guess
  outside the taxonomy, never matches. None when the judge named no class at all.

Each has a 95% Wilson interval on n = its denominator rounded down (the expected number of
rejects, or accepts, in one draw).
"""

from __future__ import annotations

import math

import numpy as np

from judges.class_sets import category_members, is_classified
from judges.metrics import mean_over, wilson_interval


def ratio_with_interval(numerator: float, denominator: float) -> tuple[float | None, tuple[float, float] | None]:
    """Return (numerator ÷ denominator, its Wilson interval on n = ⌊denominator⌋); None when nothing is counted."""
    if denominator <= 0:
        return None, None
    rate = float(numerator / denominator)
    return rate, wilson_interval(rate, int(math.floor(denominator + 1e-9)))


def precision_and_npv(probs: np.ndarray, is_wrong: np.ndarray) -> dict:
    """Return precision and NPV of one reject_prob column, with their intervals."""
    probs = np.asarray(probs, dtype=float)
    is_wrong = np.asarray(is_wrong, dtype=bool)
    judged = ~np.isnan(probs)
    p = np.where(judged, probs, 0.0)
    accept = np.where(judged, 1.0 - probs, 0.0)
    precision, precision_ci = ratio_with_interval(float(p[is_wrong].sum()), float(p.sum()))
    npv, npv_ci = ratio_with_interval(float(accept[~is_wrong].sum()), float(accept.sum()))
    return {"precision": precision, "precision_ci95": precision_ci, "npv": npv, "npv_ci95": npv_ci}


def catch_rates_by_category(
    probs: np.ndarray, is_wrong: np.ndarray, error_class: np.ndarray, category_of: dict[str, str]
) -> dict:
    """Return {category: {"rate", "ci95", "n"}} for every category present among wrong items."""
    result = {}
    for category, members in category_members(error_class, is_wrong, category_of).items():
        rate, n = mean_over(probs, members)
        result[category] = {"rate": rate, "ci95": wilson_interval(rate, n), "n": n}
    return result


def class_accuracy(
    probs: np.ndarray, matched_share: np.ndarray, is_wrong: np.ndarray, error_class: np.ndarray, guessed: bool
) -> dict:
    """Return class accuracy and its interval; `matched_share` is m per item (0 where none matched).

    `guessed` says whether the judge named any class at all on these items: without one its
    class accuracy is not measured (None), not 0.
    """
    probs = np.asarray(probs, dtype=float)
    items = np.asarray(is_wrong, dtype=bool) & is_classified(error_class) & ~np.isnan(probs)
    if not guessed:
        return {"class_accuracy": None, "class_accuracy_ci95": None}
    rate, interval = ratio_with_interval(float(np.asarray(matched_share)[items].sum()), float(probs[items].sum()))
    return {"class_accuracy": rate, "class_accuracy_ci95": interval}
