"""Which unlabelled item to label next so the judge comparison's uncertainty shrinks fastest.

Pure functions over the judges' reject probabilities (items × judges, NaN unjudged). An
item's score is the sum of two terms:

- **disagreement**: the chance that one draw of two judges disagree on it, averaged over
  the pairs of judges that both judged it (p_a (1 − p_b) + p_b (1 − p_a)). Where the
  judges agree, a label changes little in the comparison; where they split, it moves
  one judge's catch or false-reject count and not the other's.
- **interval shrink**: the expected narrowing of a per-class catch-rate interval if the
  item turns out wrong: P(wrong) × Σ_c q_c × (width(n_c) − width(n_c + 1)), where P(wrong)
  is the judges' mean reject probability, q_c the share of their rejecting verdicts that
  name class c (uniform when none names a class), n_c the wrong items of class c labelled
  so far, and width the Wilson width (`judges.interval_budget`) at the widest rate, 0.5,
  since the judges' rate on the class is what is being measured. Small classes gain most.

Ties keep id order, so the order is stable and reproducible.
"""

from __future__ import annotations

import itertools

import numpy as np

from judges.interval_budget import UNKNOWN_RATE, interval_width


def pair_disagreement(probs: np.ndarray) -> np.ndarray:
    """Return per item the mean over judge pairs (both judged) of one draw each disagreeing; 0 if none."""
    probs = np.asarray(probs, dtype=float)
    total = np.zeros(len(probs))
    pairs = np.zeros(len(probs))
    for a, b in itertools.combinations(range(probs.shape[1] if probs.ndim == 2 else 0), 2):
        both = ~np.isnan(probs[:, a]) & ~np.isnan(probs[:, b])
        pa, pb = probs[both, a], probs[both, b]
        total[both] += pa * (1 - pb) + pb * (1 - pa)
        pairs[both] += 1
    return np.divide(total, pairs, out=np.zeros(len(probs)), where=pairs > 0)


def wrong_probability(probs: np.ndarray) -> np.ndarray:
    """Return per item the judges' mean reject probability (0 where no judge judged it)."""
    probs = np.asarray(probs, dtype=float)
    judged = ~np.isnan(probs)
    counts = judged.sum(axis=1)
    return np.divide(np.nansum(probs, axis=1), counts, out=np.zeros(len(probs)), where=counts > 0)


def class_shares(class_votes: np.ndarray) -> np.ndarray:
    """Turn items × classes counts of rejecting verdicts naming each class into shares (uniform if none)."""
    votes = np.asarray(class_votes, dtype=float)
    totals = votes.sum(axis=1, keepdims=True)
    uniform = np.full_like(votes, 1.0 / votes.shape[1]) if votes.shape[1] else votes
    return np.where(totals > 0, votes / np.maximum(totals, 1), uniform)


def width_gain(class_counts) -> np.ndarray:
    """Return per class how much one more wrong item narrows its interval (at the widest rate)."""
    return np.array(
        [interval_width(rate=UNKNOWN_RATE, n=n) - interval_width(rate=UNKNOWN_RATE, n=n + 1) for n in class_counts]
    )


def informative_scores(*, probs: np.ndarray, class_votes: np.ndarray, class_counts) -> np.ndarray:
    """Return each item's score: judges' disagreement plus the expected per-class interval shrink."""
    shrink = wrong_probability(probs) * (class_shares(class_votes) @ width_gain(class_counts))
    return pair_disagreement(probs) + shrink


def informative_order(*, ids, scores) -> list:
    """Return ids by score, highest first; equal scores keep ascending id order."""
    ids = list(ids)
    order = np.lexsort((np.asarray(ids), -np.asarray(scores, dtype=float)))
    return [ids[i] for i in order]
