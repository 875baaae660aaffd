"""What judges miss and catch together, as pure numpy functions: no ORM, no I/O. The definitions.

The per-judge figures (rates, intervals, the tie rule, κ, costs) are `judges.metrics`;
this module builds on them for pairs, miss patterns and ensembles. README.md
("Definitions") states the same rules.

- **Missed** is always an expected count: an item is missed by a judge with probability
  1 − p. "Both missed" = Σ over wrong items judged by both of (1 − pₐ)(1 − p_b); an UpSet
  bar = Σ over wrong items judged by every judge of Π (1 − pⱼ) for the judges in the
  pattern × Π pⱼ for the others. The dashboard's click-through lists show these
  per-item probabilities, which sum to the number clicked.
- **Ensembles are scored as deployed**: on one draw per member. Draw r of a judge on an
  item is its r-th answered verdict there, ordered by (run, repeat); draw r of every member
  is combined into one decision, and an item's ensemble reject probability is the mean over
  its aligned draws (r < the fewest answered verdicts of any member). Rules: any (≥ 1
  member rejects), majority (the tie rule), k_of_n (≥ k; 1 ≤ k ≤ n or refused), stacked (a
  logistic regression over the members' single-draw decisions, trained and scored
  out-of-fold with folds grouped by item). One attempt costs one generation plus one
  verdict of every member (its mean cost per verdict); latency per attempt is the max
  (parallel) or the sum (sequential) of the members' latencies on that very draw.
  Ensembles and Pareto points are computed on one common item set: the items every judge
  in the selection judged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict

from judges.metrics import (
    ERROR,
    MISSING,
    REJECT,
    attempts_per_accepted,
    cohen_kappa,
    cost_per_accepted,
    latency_percentiles,
    rates,
)

ENSEMBLE_RULES = ("any", "majority", "k_of_n", "stacked")


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
        "kappa": cohen_kappa(probs_a[both], probs_b[both]),
    }


def missed_by_all(probs: np.ndarray, is_wrong: np.ndarray, columns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Return (wrong item rows, probability every judge in `columns` misses it), sorted.

    Rows are the wrong items judged by every one of the judges with a non-zero
    probability, most likely first; for two judges the probabilities sum to the pair's
    `both_missed`.
    """
    chosen = probs[:, columns]
    scored = is_wrong & ~np.isnan(chosen).any(axis=1)
    probability = np.where(scored, np.prod(1 - np.nan_to_num(chosen), axis=1), 0.0)
    return sorted_nonzero(probability)


def missed_exactly(probs: np.ndarray, is_wrong: np.ndarray, pattern: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (wrong item rows, probability exactly the judges flagged in `pattern` miss it), sorted.

    Items count when every judge judged them (the UpSet chart's item set); the
    probabilities sum to the pattern's UpSet bar.
    """
    pattern = np.asarray(pattern, dtype=bool)
    scored = is_wrong & ~np.isnan(probs).any(axis=1)
    clean = np.nan_to_num(probs)
    factors = np.where(pattern[np.newaxis, :], 1 - clean, clean)
    probability = np.where(scored, np.prod(factors, axis=1), 0.0)
    return sorted_nonzero(probability)


def sorted_nonzero(probability: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return rows with a non-zero probability, largest first (ties by row), and their values."""
    rows = np.flatnonzero(probability > 0)
    order = np.lexsort((rows, -probability[rows]))
    return rows[order], probability[rows[order]]


def miss_patterns(probs: np.ndarray, is_wrong: np.ndarray) -> dict[tuple[bool, ...], float]:
    """Return the expected number of wrong items per exact miss pattern (True = that judge misses).

    Over wrong items judged by every judge: Σ_items Π_j (1 − pⱼ if j misses else pⱼ).
    Patterns with zero expected size are left out; the values sum to the number of such
    items, and all patterns but the all-caught one sum to Σ (1 − Π pⱼ).
    """
    scored = is_wrong & ~np.isnan(probs).any(axis=1)
    rows = probs[scored]
    weights = {(): np.ones(len(rows))}
    for column in range(probs.shape[1]):
        grown = {}
        for pattern, weight in weights.items():
            for missed, factor in ((True, 1 - rows[:, column]), (False, rows[:, column])):
                product = weight * factor
                if product.any():
                    grown[(*pattern, missed)] = product
        weights = grown
    return {pattern: float(weight.sum()) for pattern, weight in weights.items()} if len(rows) else {}


def threshold_for(rule: str, n_members: int, k: int | None = None) -> int:
    """Return how many of n answering members must reject for the ensemble to reject.

    "majority" follows the tie rule (`majority_rejects`): strictly more than half. k out of
    1..n is refused, never clamped.
    """
    if rule == "any":
        return 1
    if rule == "majority":
        return n_members // 2 + 1
    if rule == "k_of_n":
        if k is None or not 1 <= k <= n_members:
            raise ValueError(f"k must be between 1 and {n_members} (the number of judges chosen); got {k!r}")
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


@dataclass(frozen=True)
class DrawTable:
    """Answered verdicts as draws: items × judges × draw slot (draw r = r-th answered verdict)."""

    decisions: np.ndarray  # int8: ACCEPT, REJECT or MISSING
    latency: np.ndarray  # float64, NaN where MISSING


def draws_from_rows(item_index, judge_index, decision, draw_key, latency, n_items: int, n_judges: int) -> DrawTable:
    """Lay answered verdict rows out as draws, ordered within each item × judge by draw_key.

    draw_key orders a judge's verdicts on an item (Docket uses run × 2¹⁶ + repeat); errors
    are dropped, so draw r is the r-th *answered* verdict.
    """
    decision = np.asarray(decision)
    keep = decision != ERROR
    item = np.asarray(item_index, dtype=np.int64)[keep]
    judge = np.asarray(judge_index, dtype=np.int64)[keep]
    code = decision[keep]
    key = np.asarray(draw_key, dtype=np.int64)[keep]
    values = np.asarray(latency, dtype=float)[keep]
    cell = judge * n_items + item
    order = np.lexsort((key, cell))
    cell_sorted = cell[order]
    slot = np.arange(len(order)) - np.searchsorted(cell_sorted, cell_sorted, side="left")
    n_slots = int(slot.max()) + 1 if len(slot) else 0
    decisions = np.full((n_items, n_judges, n_slots), MISSING, dtype=np.int8)
    latencies = np.full((n_items, n_judges, n_slots), np.nan)
    decisions[item[order], judge[order], slot] = code[order]
    latencies[item[order], judge[order], slot] = values[order]
    return DrawTable(decisions=decisions, latency=latencies)


def draws_from_decisions(decisions: np.ndarray, latency: np.ndarray | None = None) -> DrawTable:
    """Build draws from an items × judges × repeats array of decision codes (tests, tools)."""
    decisions = np.asarray(decisions)
    items, judges, repeats = np.nonzero(decisions != MISSING)
    codes = decisions[items, judges, repeats]
    lat = np.zeros(len(codes)) if latency is None else np.asarray(latency, dtype=float)[items, judges, repeats]
    return draws_from_rows(items, judges, codes, repeats, lat, decisions.shape[0], decisions.shape[1])


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
    aligned = (member_decisions != MISSING).all(axis=1)
    n_members = member_decisions.shape[1]
    if rule == "stacked":
        rows, slots = np.nonzero(aligned)
        features = (member_decisions[rows, :, slots] == REJECT).astype(float)
        decided = stacked_decisions(features, np.asarray(is_wrong)[rows], rows, cv=cv)
        decisions = np.zeros(aligned.shape)
        decisions[rows, slots] = decided
        return decisions, aligned
    rejects = (member_decisions == REJECT).sum(axis=1)
    return (rejects >= threshold_for(rule, n_members, k)).astype(float), aligned


def ensemble_metrics(
    draws: DrawTable,
    is_wrong: np.ndarray,
    members: list[int],
    rule: str,
    *,
    items: np.ndarray,
    cost_per_verdict: np.ndarray,
    generation_cost: float = 0.0,
    k: int | None = None,
    cv=None,
) -> dict:
    """Return rates, cost per accepted and latency of an ensemble deployed on single draws.

    `items` marks the item set scored (the dashboard passes the items every judge judged).
    An item's reject probability is the mean of the ensemble's decisions over its aligned
    draws. One attempt costs one generation plus one verdict of each member; latency is the
    max (parallel) or the sum (sequential) of the members' latencies on the same draw.
    """
    items = np.asarray(items, dtype=bool)
    member_decisions = draws.decisions[items][:, members, :]
    wrong = np.asarray(is_wrong)[items]
    decisions, aligned = ensemble_draw_decisions(member_decisions, rule, is_wrong=wrong, k=k, cv=cv)
    n_aligned = aligned.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        combined = np.where(
            n_aligned > 0, np.where(aligned, decisions, 0).sum(axis=1) / np.maximum(n_aligned, 1), np.nan
        )
    result = rates(combined, wrong)
    review_cost = float(np.sum(np.asarray(cost_per_verdict)[members]))
    result["items"] = int(items.sum())
    result["draws"] = int(aligned.sum())
    result["k"] = None if rule == "stacked" else threshold_for(rule if len(members) > 1 else "any", len(members), k)
    result["cost_per_attempt_usd"] = generation_cost + review_cost
    result["attempts_per_accepted"] = attempts_per_accepted(result["flag_rate"])
    result["cost_per_accepted_usd"] = cost_per_accepted(result["flag_rate"], review_cost, generation_cost)
    # Aligned draws have every member's latency; the others are dropped.
    latency = draws.latency[items][:, members, :]
    parallel = latency.max(axis=1)[aligned] if latency.size else np.empty(0)
    sequential = latency.sum(axis=1)[aligned] if latency.size else np.empty(0)
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
