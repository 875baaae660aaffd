"""Verdicts as draws, and the members' aligned draws: the item set and draw set every joint figure uses.

Pure numpy, no ORM. Draw r of a judge on an item is its r-th *answered* verdict there,
ordered by (run, repeat); errors are dropped. Draw r of several judges is **aligned** when
every one of them has an r-th answered verdict on the item. Every figure about judges
together — a pair's union and misses, the ladder's cumulative catch, miss patterns and
ensembles (`judges.ensembles`) — is the mean over an item's aligned draws of what those
draws decided, so an item counts once whatever its repeat count, and an item without an
aligned draw (some member never answered it) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judges.metrics import ERROR, MISSING


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


def member_draws(
    draws: DrawTable, members: list[int], items: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Return (decisions items × members × draws, aligned items × draws) of the chosen members.

    `items` (a boolean mask) keeps only those item rows; a draw is aligned when every
    member answered it.
    """
    decisions = draws.decisions if items is None else draws.decisions[np.asarray(items, dtype=bool)]
    chosen = decisions[:, list(members), :]
    # With no member, no draw is aligned (all() of nothing would say every one is).
    return chosen, (chosen != MISSING).all(axis=1) & bool(len(members))


def mean_over_aligned(values: np.ndarray, aligned: np.ndarray) -> np.ndarray:
    """Return per item the mean of `values` (items × draws) over its aligned draws; NaN without any."""
    n_aligned = aligned.sum(axis=1)
    total = np.where(aligned, values, 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_aligned > 0, total / np.maximum(n_aligned, 1), np.nan)
