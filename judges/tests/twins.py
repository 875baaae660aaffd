"""Twins of the definitions: each figure computed again, from the raw verdict table, in plain Python.

The property tests hold the product's functions equal to these on random tables. A twin
shares no code with the function it checks (not even `judges.metrics`): it walks the table
item by item, as the README's "Definitions" words it, so a test fails when either is wrong
rather than when a page forgets to call a function.

A table is a list of items, each a list of judges, each a list of decisions in draw order:
"accept", "reject", "error", or None (no verdict).
"""

import math

Z = 1.959964


def answered(table, item: int, judge: int) -> list[str]:
    """Return the judge's answered decisions on the item in draw order (errors and gaps dropped)."""
    return [d for d in table[item][judge] if d in ("accept", "reject")]


def aligned(table, item: int, judges) -> list[list[str]]:
    """Return the item's aligned draws: draw r of every judge, for r below the fewest answered."""
    per_judge = [answered(table, item, judge) for judge in judges]
    depth = min(len(draws) for draws in per_judge) if per_judge else 0
    return [[draws[r] for draws in per_judge] for r in range(depth)]


def share(draws: list[list[str]], decides) -> float | None:
    """Return the share of aligned draws on which `decides(draw)` holds (None without a draw)."""
    if not draws:
        return None
    return sum(1 for draw in draws if decides(draw)) / len(draws)


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def wilson(p: float | None, n: float) -> tuple[float, float] | None:
    """The Wilson score interval, from its textbook formula."""
    if p is None or n <= 0:
        return None
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(max(p * (1 - p) / n + Z * Z / (4 * n * n), 0.0))
    return (max(0.0, centre - half), min(1.0, centre + half))


def reject_share(table, item: int, judge: int) -> float | None:
    """One judge's reject probability on an item: rejects over answered verdicts."""
    draws = answered(table, item, judge)
    return draws.count("reject") / len(draws) if draws else None


def judge_rates(table, is_wrong, judge: int) -> dict:
    """A judge's catch and false-reject rates with their Wilson intervals."""
    shares = [reject_share(table, item, judge) for item in range(len(table))]
    wrong = [s for s, w in zip(shares, is_wrong, strict=True) if w and s is not None]
    correct = [s for s, w in zip(shares, is_wrong, strict=True) if not w and s is not None]
    catch, false_reject = mean(wrong), mean(correct)
    return {
        "catch_rate": catch,
        "catch_rate_ci95": wilson(catch, len(wrong)),
        "false_reject_rate": false_reject,
        "false_reject_rate_ci95": wilson(false_reject, len(correct)),
        "judged_wrong": len(wrong),
        "judged_correct": len(correct),
    }


def any_ensemble(table, is_wrong, judges, items=None) -> dict:
    """Catch and false reject of "reject if any of `judges` rejects", per aligned draw, per item."""
    rows = range(len(table)) if items is None else [i for i in range(len(table)) if items[i]]
    per_item = {i: share(aligned(table, i, judges), lambda draw: "reject" in draw) for i in rows}
    return {
        "catch_rate": mean(v for i, v in per_item.items() if is_wrong[i]),
        "false_reject_rate": mean(v for i, v in per_item.items() if not is_wrong[i]),
    }


def pair(table, is_wrong, a: int, b: int) -> dict:
    """A pair's figures on its aligned draws: items, misses, both missed, union."""
    items = [i for i in range(len(table)) if aligned(table, i, [a, b])]
    wrong = [i for i in items if is_wrong[i]]

    def missed(i, judges):
        return share(aligned(table, i, [a, b]), lambda draw: all(draw[j] == "accept" for j in judges))

    union = any_ensemble(table, is_wrong, [a, b])
    return {
        "items": len(items),
        "missed_a": sum(missed(i, [0]) for i in wrong),
        "missed_b": sum(missed(i, [1]) for i in wrong),
        "both_missed": sum(missed(i, [0, 1]) for i in wrong),
        "union_catch_rate": union["catch_rate"],
        "union_false_reject_rate": union["false_reject_rate"],
    }


def ladder(table, is_wrong, rungs: list[int]) -> list[dict]:
    """The ladder's rows: on the items every rung answered, the any-ensemble of rungs 1..k."""
    kept = [all(answered(table, i, rung) for rung in rungs) for i in range(len(table))]
    rows = []
    for depth in range(1, len(rungs) + 1):
        union = any_ensemble(table, is_wrong, rungs[:depth], items=kept)
        rows.append({"catch": union["catch_rate"], "false_reject": union["false_reject_rate"]})
    return rows


def miss_patterns(table, is_wrong, n_judges: int) -> dict[tuple[bool, ...], float]:
    """Expected wrong items per exact miss pattern, over aligned draws of every judge."""
    sizes: dict[tuple[bool, ...], float] = {}
    for i in range(len(table)):
        draws = aligned(table, i, range(n_judges))
        if not is_wrong[i] or not draws:
            continue
        for draw in draws:
            pattern = tuple(decision == "accept" for decision in draw)
            sizes[pattern] = sizes.get(pattern, 0.0) + 1 / len(draws)
    return sizes


def weighted_rate(values, weights) -> tuple[float | None, tuple[float, float] | None]:
    """A weighted mean of 0/1 values and its Wilson interval on the design-effective n.

    The effective n is the simple-random-sample size with the same variance:
    p(1 − p) / (Σ w²(y − p)² / (Σw)²); n itself with equal weights; Kish's (Σw)²/Σw² when
    that variance is 0.
    """
    pairs = [(v, w) for v, w in zip(values, weights, strict=True) if w > 0]
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0:
        return None, None
    p = sum(v * w for v, w in pairs) / total
    if len({w for _, w in pairs}) == 1:
        n = len(pairs)
    else:
        variance = sum(w * w * (v - p) ** 2 for v, w in pairs) / total**2
        n = p * (1 - p) / variance if variance > 0 else total**2 / sum(w * w for _, w in pairs)
    return p, wilson(p, n)
