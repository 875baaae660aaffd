"""How wide each judge's catch-rate interval is, and how many more wrong items would halve it.

Pure functions over the report's arrays; the interval is `metrics.wilson_interval`, the
product's one. "Items to halve" holds the observed rate fixed and asks for the smallest
number m of further wrong items with width(p, n + m) ≤ width(p, n) / 2 (about 3n for a
large n, since the width shrinks as 1/√n; fewer or more near 0 and 1, where Wilson is not
symmetric). With no wrong item yet the interval is the whole axis (width 1) and the rate
is unknown, so p = 0.5, the widest case, is assumed.
"""

from __future__ import annotations

import numpy as np

from judges import metrics

UNKNOWN_RATE = 0.5
MAX_ITEMS = 10_000_000


def interval_width(*, rate: float | None, n: int) -> float:
    """Return the width of the 95% Wilson interval of a rate seen on n items (1.0 when n = 0)."""
    interval = metrics.wilson_interval(UNKNOWN_RATE if rate is None else rate, n)
    return 1.0 if interval is None else interval[1] - interval[0]


def items_to_halve(*, rate: float | None, n: int) -> int:
    """Return how many more items at the same rate would halve the interval's width."""
    rate = UNKNOWN_RATE if rate is None or n == 0 else rate
    target = interval_width(rate=rate, n=n) / 2
    low, high = n, max(2 * n, 1)
    while interval_width(rate=rate, n=high) > target:
        low, high = high, high * 2
        if high > MAX_ITEMS:
            return MAX_ITEMS
    while high - low > 1:  # width falls as n grows: bisect for the first n at or under target
        middle = (low + high) // 2
        low, high = (low, middle) if interval_width(rate=rate, n=middle) <= target else (middle, high)
    return high - n


def width_entry(*, rate: float | None, n: int) -> dict:
    return {
        "rate": rate,
        "n": n,
        "width": interval_width(rate=rate, n=n),
        "items_to_halve": items_to_halve(rate=rate, n=n),
    }


def interval_budget(*, probs: np.ndarray, is_wrong: np.ndarray, error_class: np.ndarray, classes: list[str]) -> dict:
    """Return one judge's catch-rate width and halving count, overall and per error class.

    `probs` is the judge's reject probability per item (NaN unjudged); `classes` are the
    error classes to show (a class the judge has judged no item of gets width 1).
    """
    catch, n = metrics.mean_over(probs, np.asarray(is_wrong, dtype=bool))
    by_class = metrics.catch_rates_by_error_class(probs, is_wrong, error_class)
    return {
        "overall": width_entry(rate=catch, n=n),
        "by_class": {
            slug: width_entry(rate=by_class.get(slug, {}).get("rate"), n=by_class.get(slug, {}).get("n", 0))
            for slug in classes
        },
    }
