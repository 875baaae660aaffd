"""What judges catch and miss together, as pure numpy functions: no ORM, no I/O. The definitions.

The per-judge figures (rates, intervals, the tie rule, κ, costs) are `judges.metrics`;
the draws and their alignment are `judges.draws`. README.md ("Definitions") states the
same rules.

- **One definition of "together": aligned draws.** Draw r of a judge on an item is its
  r-th answered verdict there, ordered by (run, repeat); draw r of several judges is
  aligned when each of them has one. Every joint figure is the mean, over an item's
  aligned draws, of what those draws decided; items without an aligned draw are left out.
- **Ensembles are scored as deployed**: draw r of every member is combined into one
  decision, and an item's ensemble reject probability is the mean over its aligned draws.
  Rules: any (≥ 1 member rejects), majority (the tie rule), k_of_n (≥ k; 1 ≤ k ≤ n or
  refused, `judges.metrics.k_of_n_problem`), stacked (a logistic regression over the
  members' single-draw decisions, trained and scored out-of-fold with folds grouped by
  item). `ensemble_metrics` is the one implementation: a pair's union
  (`pair_overlap`) and the ladder's cumulative catch (`judges.ladder`) are its `any`
  ensemble of those members.
- **Missed** is an expected count over those same draws: "both missed" = Σ over wrong
  items of the share of the pair's aligned draws on which neither rejects (= the items
  × (1 − union catch)); an UpSet bar = Σ over wrong items of the share of aligned draws of
  every judge on which exactly the judges of the pattern miss. The dashboard's
  click-through lists show these per-item shares, which sum to the number clicked.
- **Costs.** One attempt costs one generation plus one verdict of every member (its mean
  cost per verdict); a member whose cost was never measured makes the ensemble's cost
  unknown (None), never $0, and such a point is left off the Pareto frontier. Latency per
  attempt is the max (parallel) or the sum (sequential) of the members' latencies on that
  very draw. Ensembles and Pareto points are computed on one common item set: the items
  every judge in the selection judged.
"""

from __future__ import annotations

import math

import numpy as np

from judges.draws import (
    DrawTable,
    aligned_bits,
    bit_count,
    draws_from_decisions,
    draws_from_rows,
    mean_over_aligned,
    member_draws,
    share_of_aligned,
)
from judges.metrics import (
    ACCEPT,
    MISSING,
    REJECT,
    attempts_per_accepted,
    cohen_kappa_of_table,
    cost_per_accepted,
    k_of_n_problem,
    latency_percentiles,
    majority_rejects,
    rates,
)

ENSEMBLE_RULES = ("any", "majority", "k_of_n", "stacked")
# Re-exported: the draws were defined here first, and callers import them from here.
__all__ = ["DrawTable", "draws_from_decisions", "draws_from_rows"]


def threshold_for(rule: str, n_members: int, k: int | None = None) -> int:
    """Return how many of n answering members must reject for the ensemble to reject.

    "majority" follows the tie rule (`majority_rejects`): strictly more than half. k out of
    1..n is refused (`k_of_n_problem`, the check triage policies use too), never clamped.
    """
    if rule == "any":
        return 1
    if rule == "majority":
        return n_members // 2 + 1
    if rule == "k_of_n":
        problem = k_of_n_problem(k, n_members)
        if problem:
            raise ValueError(problem)
        return k
    raise ValueError(f"unknown ensemble rule {rule!r}; use one of {', '.join(ENSEMBLE_RULES)}")


def ensemble_description(member_labels: list[str], rule: str, k: int | None = None) -> str:
    """Describe an ensemble with its rule and the k it used, e.g. "2 of 3 reject (k_of_n, k=2)"."""
    n = len(member_labels)
    joined = " + ".join(member_labels)
    if rule == "stacked":
        return f"{joined}: stacked logistic regression over single draws"
    if rule == "single" or n == 1:
        return f"{joined}: one judge (k=1)"
    k_used = threshold_for(rule, n, k)
    return f"{joined}: at least {k_used} of {n} reject ({rule}, k={k_used})"


def stacked_decisions(features: np.ndarray, is_wrong: np.ndarray, groups: np.ndarray, cv=None) -> np.ndarray:
    """Return out-of-fold 0/1 decisions of a logistic regression over single-draw member decisions.

    One row per aligned draw of an item; folds are grouped by item (`groups`) so no draw of
    an item is scored by a model that saw another draw of it, and stratified by label.
    Classes are weighted "balanced" so the 0.5 threshold does not follow the wrong share.
    NaN everywhere when either class has fewer than two items.
    """
    y = np.asarray(is_wrong, dtype=int)
    groups = np.asarray(groups)
    item_labels = {}
    for group, label in zip(groups.tolist(), y.tolist(), strict=True):
        item_labels[group] = label
    wrong_items = sum(item_labels.values())
    smallest_class = int(min(wrong_items, len(item_labels) - wrong_items))
    if smallest_class < 2:
        return np.full(len(y), np.nan)
    # scikit-learn (and SciPy under it) takes most of a second to import; only the stacked
    # ensemble needs it, so it is loaded here rather than by every command and worker that
    # imports this module (issue 33: `run_calibration`'s start-up).
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 — heavy, used only when fitting
    from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict  # noqa: PLC0415 — heavy, idem

    if cv is None:
        cv = StratifiedGroupKFold(n_splits=min(5, smallest_class), shuffle=True, random_state=0)
    model = LogisticRegression(class_weight="balanced")
    wrong_probability = cross_val_predict(model, features, y, groups=groups, cv=cv, method="predict_proba")[:, 1]
    return (wrong_probability >= 0.5).astype(float)


def ensemble_draw_decisions(
    member_decisions: np.ndarray, rule: str, *, is_wrong: np.ndarray | None = None, k: int | None = None, cv=None
) -> tuple[np.ndarray, np.ndarray]:
    """Return (decision per item × draw, aligned mask) of an ensemble on one draw per member.

    `member_decisions` is items × members × draws; draw r is aligned when every member
    answered its r-th draw. Decisions are 1 (reject), 0, or NaN (stacked, undefined).
    """
    aligned = (member_decisions != MISSING).all(axis=1) & (member_decisions.shape[1] > 0)
    n_members = member_decisions.shape[1]
    if rule == "stacked":
        rows, slots = np.nonzero(aligned)
        features = (member_decisions[rows, :, slots] == REJECT).astype(float)
        decided = stacked_decisions(features, np.asarray(is_wrong)[rows], rows, cv=cv)
        decisions = np.zeros(aligned.shape)
        decisions[rows, slots] = decided
        return decisions, aligned
    rejects = (member_decisions == REJECT).sum(axis=1)
    if rule == "majority":  # every member answered an aligned draw: the tie rule over n votes
        return majority_rejects(rejects, n_members).astype(float), aligned
    return (rejects >= threshold_for(rule, n_members, k)).astype(float), aligned


def ensemble_reject_probability(
    draws: DrawTable,
    members: list[int],
    rule: str,
    *,
    items: np.ndarray | None = None,
    is_wrong: np.ndarray | None = None,
    k: int | None = None,
    cv=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return (reject probability per scored item, aligned draws) of an ensemble on single draws.

    Rows are the items of `items` (all when None); an item's probability is the mean of
    the ensemble's decisions over its aligned draws, NaN when it has none. The `any` rule
    reads the draws' reject bits: the share of aligned draws with a reject bit in any member.
    """
    if rule == "any":
        n_aligned, bits = aligned_bits(draws, members, items)
        caught = bit_count(np.bitwise_or.reduce(bits, axis=1)) if len(members) else np.zeros(len(n_aligned))
        # Answered draws fill the first slots, so the aligned ones are slots below n_aligned.
        aligned = np.arange(draws.decisions.shape[2]) < n_aligned[:, np.newaxis]
        return share_of_aligned(caught, n_aligned), aligned
    member_decisions, _ = member_draws(draws, members, items)
    wrong = None if is_wrong is None else (np.asarray(is_wrong) if items is None else np.asarray(is_wrong)[items])
    decisions, aligned = ensemble_draw_decisions(member_decisions, rule, is_wrong=wrong, k=k, cv=cv)
    return mean_over_aligned(decisions, aligned), aligned


def members_cost(cost_per_verdict, members: list[int]) -> float | None:
    """Return the members' summed cost per verdict; None when any member's cost is unknown (NaN)."""
    if cost_per_verdict is None:
        return None
    total = float(np.sum(np.asarray(cost_per_verdict, dtype=float)[members]))
    return None if math.isnan(total) else total


def ensemble_rates(
    draws: DrawTable,
    is_wrong: np.ndarray,
    members: list[int],
    rule: str,
    *,
    items: np.ndarray | None = None,
    k: int | None = None,
    cv=None,
) -> tuple[dict, np.ndarray]:
    """Return (catch / false-reject / flag rates with items, draws and k; aligned draws) of an ensemble.

    The rates part of `ensemble_metrics`, which pairs and the ladder read without costs or
    latencies: `metrics.rates` of the ensemble's reject probability on `items` (all when None).
    """
    items = np.ones(len(is_wrong), dtype=bool) if items is None else np.asarray(items, dtype=bool)
    combined, aligned = ensemble_reject_probability(draws, members, rule, items=items, is_wrong=is_wrong, k=k, cv=cv)
    result = rates(combined, np.asarray(is_wrong)[items])
    result["items"] = int(items.sum())
    result["draws"] = int(aligned.sum())
    result["k"] = None if rule == "stacked" else threshold_for(rule if len(members) > 1 else "any", len(members), k)
    return result, aligned


def ensemble_metrics(
    draws: DrawTable,
    is_wrong: np.ndarray,
    members: list[int],
    rule: str,
    *,
    items: np.ndarray | None = None,
    cost_per_verdict: np.ndarray | None = None,
    generation_cost: float = 0.0,
    k: int | None = None,
    cv=None,
    latency: bool = True,
) -> dict:
    """Return rates, cost per accepted and latency of an ensemble deployed on single draws.

    The product's one definition of "these judges together" (its rates are `ensemble_rates`).
    `items` marks the item set scored (the dashboard passes the items every judge judged;
    all when None). An item's reject probability is the mean of the ensemble's decisions
    over its aligned draws. One attempt costs one generation plus one verdict of each
    member (None when a member's cost is unknown, NaN in `cost_per_verdict`, or no costs
    are given); latency is the max (parallel) or the sum (sequential) of the members'
    latencies on the same draw; `latency=False` leaves the latency keys out (a page that
    shows no ensemble's latency: its percentiles were half the dashboard's ensembles time).
    """
    items = np.ones(len(is_wrong), dtype=bool) if items is None else np.asarray(items, dtype=bool)
    result, aligned = ensemble_rates(draws, is_wrong, members, rule, items=items, k=k, cv=cv)
    review_cost = members_cost(cost_per_verdict, members)
    result["cost_per_attempt_usd"] = None if review_cost is None else generation_cost + review_cost
    result["attempts_per_accepted"] = attempts_per_accepted(result["flag_rate"])
    result["cost_per_accepted_usd"] = cost_per_accepted(result["flag_rate"], review_cost, generation_cost)
    if latency:
        result.update(ensemble_latency(draws, members, items, aligned))
    return result


def ensemble_latency(draws: DrawTable, members: list[int], items: np.ndarray, aligned: np.ndarray) -> dict:
    """Return an ensemble's p50/p95 latency run in parallel (the slowest member) and in sequence (their sum)."""
    result = {}
    # Aligned draws have every member's latency; the others are dropped.
    latency = draws.latency[:, members, :][items]
    parallel = latency.max(axis=1)[aligned] if latency.size else np.empty(0)
    sequential = latency.sum(axis=1)[aligned] if latency.size else np.empty(0)
    result["latency_ms_parallel_p50"], result["latency_ms_parallel_p95"] = latency_percentiles(parallel)
    result["latency_ms_sequential_p50"], result["latency_ms_sequential_p95"] = latency_percentiles(sequential)
    return result


def pair_overlap(draws: DrawTable, is_wrong: np.ndarray, a: int, b: int) -> dict:
    """Return miss-set overlap, the union ("reject if either rejects") and κ of two judges.

    Everything is on the pair's aligned draws: the items are those with at least one (both
    judges answered), each counts once (the mean over its aligned draws), and the union is
    the two-member `any` ensemble (`ensemble_rates`, the rates of `ensemble_metrics`) on
    those items. Misses are expected counts, so both_missed = wrong items × (1 − union_catch_rate).
    """
    n_aligned, bits = aligned_bits(draws, [a, b])
    rejects_a, rejects_b = bits[:, 0, :], bits[:, 1, :]
    paired = n_aligned > 0
    wrong = paired & np.asarray(is_wrong, dtype=bool)

    def share(rejected_bits) -> np.ndarray:
        return share_of_aligned(bit_count(rejected_bits), n_aligned)

    reject_a, reject_b, reject_both = share(rejects_a), share(rejects_b), share(rejects_a & rejects_b)
    missed_a, missed_b = 1 - reject_a, 1 - reject_b
    reject_either = share(rejects_a | rejects_b)
    share_both_missed = 1 - reject_either
    # The `any` ensemble's reject probability on the paired items, from the bits already at
    # hand (what `ensemble_rates(..., "any", items=paired)` computes; the tests hold them equal).
    union = rates(reject_either[paired], np.asarray(is_wrong, dtype=bool)[paired])
    both_missed = float(share_both_missed[wrong].sum())
    missed_either = float(missed_a[wrong].sum() + missed_b[wrong].sum()) - both_missed
    # The 2×2 table of aligned draws (each item weighs one): rows a accepts/rejects, columns b.
    cells = [[share_both_missed, reject_b - reject_both], [reject_a - reject_both, reject_both]]
    table = np.array([[float(cell[paired].sum()) for cell in row] for row in cells])
    return {
        "items": int(paired.sum()),
        "missed_a": float(missed_a[wrong].sum()),
        "missed_b": float(missed_b[wrong].sum()),
        "both_missed": both_missed,
        "miss_jaccard": both_missed / missed_either if missed_either > 1e-12 else None,
        "union_catch_rate": union["catch_rate"],
        "union_false_reject_rate": union["false_reject_rate"],
        "kappa": cohen_kappa_of_table(table) if paired.any() else None,
    }


def missed_by_all(draws: DrawTable, is_wrong: np.ndarray, columns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Return (wrong item rows, share of aligned draws on which every judge of `columns` misses), sorted.

    That share is 1 − the `any` ensemble's reject probability; rows are the wrong items
    with a non-zero share, largest first. For two judges the shares sum to the pair's
    `both_missed`.
    """
    caught, _ = ensemble_reject_probability(draws, columns, "any")
    scored = np.asarray(is_wrong, dtype=bool) & ~np.isnan(caught)
    return sorted_nonzero(np.where(scored, 1 - np.nan_to_num(caught), 0.0))


def missed_exactly(draws: DrawTable, is_wrong: np.ndarray, pattern: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (wrong item rows, share of aligned draws on which exactly the judges in `pattern` miss), sorted.

    Aligned draws of every judge (the UpSet chart's items and draws); the shares sum to the
    pattern's UpSet bar.
    """
    pattern = np.asarray(pattern, dtype=bool)
    decisions, aligned = member_draws(draws, list(range(draws.decisions.shape[1])))
    matches = ((decisions == ACCEPT) == pattern[np.newaxis, :, np.newaxis]).all(axis=1)
    share = mean_over_aligned(matches, aligned)
    scored = np.asarray(is_wrong, dtype=bool) & ~np.isnan(share)
    return sorted_nonzero(np.where(scored, np.nan_to_num(share), 0.0))


def sorted_nonzero(probability: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return rows with a non-zero probability, largest first (ties by row), and their values."""
    rows = np.flatnonzero(probability > 0)
    order = np.lexsort((rows, -probability[rows]))
    return rows[order], probability[rows[order]]


def miss_patterns(draws: DrawTable, is_wrong: np.ndarray) -> dict[tuple[bool, ...], float]:
    """Return the expected number of wrong items per exact miss pattern (True = that judge misses).

    Over wrong items with an aligned draw of every judge: each aligned draw adds
    1 / (the item's aligned draws) to the pattern it shows. Patterns never seen are left
    out; the values sum to the number of such items.
    """
    n_judges = draws.decisions.shape[1]
    decisions, aligned = member_draws(draws, list(range(n_judges)))
    n_aligned = aligned.sum(axis=1)
    scored = np.asarray(is_wrong, dtype=bool) & (n_aligned > 0)
    rows, slots = np.nonzero(aligned & scored[:, np.newaxis])
    if not len(rows):
        return {}
    missed = decisions[rows, :, slots] == ACCEPT
    codes, patterns = pattern_codes(missed)
    found, inverse = np.unique(codes, return_inverse=True)
    sizes = np.bincount(inverse.ravel(), weights=1 / n_aligned[rows], minlength=len(found))
    return {patterns(code): float(size) for code, size in zip(found, sizes, strict=True)}


def pattern_codes(missed: np.ndarray):
    """Return (one integer per row of a boolean matrix, its decoder back to the row as a tuple).

    The first column is the highest bit, so codes sort as the rows do. Sorting a million
    small integers is far cheaper than `np.unique(axis=0)`'s sort of rows (issue 33); past
    62 columns the rows are numbered by that sort instead.
    """
    n_columns = missed.shape[1]
    if n_columns > 62:
        rows, codes = np.unique(missed, axis=0, return_inverse=True)
        return codes.ravel(), lambda code: tuple(bool(flag) for flag in rows[code])
    bits = np.left_shift(1, np.arange(n_columns - 1, -1, -1, dtype=np.int64))
    codes = missed.astype(np.int64) @ bits
    return codes, lambda code: tuple(bool(int(code) >> (n_columns - 1 - j) & 1) for j in range(n_columns))


def pareto_frontier(costs: list[float | None], catches: list[float | None]) -> list[bool]:
    """Mark points no other point beats on both cost (lower) and catch rate (higher).

    A point whose cost or catch is unknown (None or NaN) is never on the frontier and
    never pushes another point off it: an unknown cost is not $0.
    """
    known = [
        cost is not None and catch is not None and not (math.isnan(cost) or math.isnan(catch))
        for cost, catch in zip(costs, catches, strict=True)
    ]
    flags = []
    for i, (cost_i, catch_i) in enumerate(zip(costs, catches, strict=True)):
        dominated = known[i] and any(
            cost_j <= cost_i and catch_j >= catch_i and (cost_j < cost_i or catch_j > catch_i)
            for j, (cost_j, catch_j) in enumerate(zip(costs, catches, strict=True))
            if j != i and known[j]
        )
        flags.append(known[i] and not dominated)
    return flags
