"""How many labelled items a question needs: an interval of a given width, or a difference detected.

Pure functions. `items_for_width` is exact for the interval Docket shows (the Wilson interval of
`metrics.wilson_interval`): the fewest items whose interval at rate p is no wider than asked.
`items_to_detect` is the normal-approximation sample size of a two-sided test at level alpha
with the given power: paired (two judges on the same items) when the per-item variance of the
difference is known, else as if the two rates were measured on independent items.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from judges import metrics

# The stdlib's normal quantile, not scipy.stats: importing scipy.stats took seconds at every
# command's start-up (issue 33), and this is the one figure it served here.
STANDARD_NORMAL = NormalDist()
MAX_ITEMS = 10_000_000
DEFAULT_POWER = 0.8
DEFAULT_ALPHA = 0.05


def wilson_width(p: float, n: int) -> float:
    low, high = metrics.wilson_interval(p, n)
    return high - low


def items_for_width(p: float | None, width: float) -> int | None:
    """Return the fewest items whose Wilson 95% interval at rate p is at most `width` wide.

    An unknown rate plans for the widest case, 0.5. None when no number up to MAX_ITEMS does.
    """
    if not 0 < width < 1:
        raise ValueError(f"width must be between 0 and 1; got {width}")
    p = 0.5 if p is None else min(max(float(p), 0.0), 1.0)
    if wilson_width(p, MAX_ITEMS) > width:
        return None
    low, high = 1, MAX_ITEMS
    while low < high:  # the width shrinks as items are added
        middle = (low + high) // 2
        if wilson_width(p, middle) <= width:
            high = middle
        else:
            low = middle + 1
    return low


def items_to_detect(
    difference: float,
    *,
    p: float | None = None,
    paired_variance: float | None = None,
    power: float = DEFAULT_POWER,
    alpha: float = DEFAULT_ALPHA,
) -> int | None:
    """Return the items needed to detect a rate difference `difference` between two judges.

    With `paired_variance` (the variance of per-item differences B − A on the same items) the
    paired size (z₁₋α/₂ + z_power)² · v / d², where v is at least d − d² (a difference d needs at
    least a share d of items on which the two disagree). Without it, two rates p and p + d on
    independent items: (z₁₋α/₂ + z_power)² · (p(1 − p) + q(1 − q)) / d² (p unknown: 0.5 − d/2).
    None for a difference that cannot be (0 or beyond 1).
    """
    d = abs(float(difference))
    if not 0 < d <= 1:
        return None
    z = STANDARD_NORMAL.inv_cdf(1 - alpha / 2) + STANDARD_NORMAL.inv_cdf(power)
    if paired_variance is not None:
        variance = max(float(paired_variance), d - d * d)
    else:
        first = 0.5 - d / 2 if p is None else min(max(float(p), 0.0), 1.0 - d)
        second = first + d
        variance = first * (1 - first) + second * (1 - second)
    return max(1, math.ceil(z * z * variance / (d * d)))


def items_for_bound(p: float | None, bound: float, *, side: str) -> int | None:
    """Return the fewest items at which rate p's Wilson interval clears `bound`.

    side "lower": the interval's lower end at least `bound` (p must exceed it); side "upper":
    its upper end at most `bound` (p must be below it). None when more items cannot help.
    """
    if p is None or (side == "lower" and p <= bound) or (side == "upper" and p >= bound):
        return None

    def clears(n: int) -> bool:
        low, high = metrics.wilson_interval(p, n)
        return low >= bound if side == "lower" else high <= bound

    if not clears(MAX_ITEMS):
        return None
    low, high = 1, MAX_ITEMS
    while low < high:
        middle = (low + high) // 2
        if clears(middle):
            high = middle
        else:
            low = middle + 1
    return low


# The planner's defaults: a 95% interval 0.10 wide, and a difference of 0.05 between two judges.
PLAN_WIDTH = 0.10
PLAN_DIFFERENCE = 0.05


def planner_entry(entry: dict, *, width: float = PLAN_WIDTH, difference: float = PLAN_DIFFERENCE) -> dict:
    """Return a judge entry's sample-size plan: labelled items for an interval `width` wide, and to detect `difference`.

    At the judge's measured rates (0.5 where unmeasured); per error class, wrong items of that class.
    The difference is between this judge and another measured on independent items at the same rate.
    """
    by_class = {
        slug: {
            "wrong_items_for_width": items_for_width(rate, width),
            "wrong_items_to_detect": items_to_detect(difference, p=rate),
        }
        for slug, rate in entry.get("catch_rate_by_error_class", {}).items()
    }
    return {
        "interval_width": width,
        "difference": difference,
        "power": DEFAULT_POWER,
        "wrong_items_for_width": items_for_width(entry["catch_rate"], width),
        "correct_items_for_width": items_for_width(entry["false_reject_rate"], width),
        "wrong_items_to_detect": items_to_detect(difference, p=entry["catch_rate"]),
        "correct_items_to_detect": items_to_detect(difference, p=entry["false_reject_rate"]),
        "by_error_class": by_class,
    }
