"""Inter-rater agreement as pure functions over arrays: Cohen's kappa, Fleiss' kappa,
Krippendorff's alpha (nominal). No ORM here: `labelling.views` loads, these compute.

A degenerate table (every rating in one category, so chance agreement is total) has no
defined kappa: the functions return NaN, which pages show as "n/a".
"""

from collections.abc import Sequence

import numpy as np


def cohen_kappa(ratings_a: Sequence, ratings_b: Sequence, categories: Sequence | None = None) -> float:
    """Return Cohen's kappa of two raters who rated the same items (same order)."""
    if len(ratings_a) != len(ratings_b):
        raise ValueError("Both raters must rate the same items.")
    if len(ratings_a) == 0:
        return float("nan")
    cats = list(categories) if categories is not None else sorted(set(ratings_a) | set(ratings_b))
    index = {c: i for i, c in enumerate(cats)}
    a = np.array([index[r] for r in ratings_a])
    b = np.array([index[r] for r in ratings_b])
    confusion = np.zeros((len(cats), len(cats)))
    np.add.at(confusion, (a, b), 1)
    return cohen_kappa_from_confusion(confusion)


def cohen_kappa_from_confusion(confusion: np.ndarray) -> float:
    """Return Cohen's kappa from a square confusion matrix (rows rater A, columns rater B)."""
    return float(cohen_kappas_from_confusions(np.asarray(confusion, dtype=float)[np.newaxis])[0])


def cohen_kappas_from_confusions(confusions: np.ndarray) -> np.ndarray:
    """Return Cohen's kappa of each of a stack of square confusion matrices (NaN where undefined).

    The one definition: `cohen_kappa_from_confusion` is this on a stack of one (a bootstrap
    computes thousands of tables at once).
    """
    confusions = np.asarray(confusions, dtype=float)
    n = confusions.sum(axis=(-2, -1))
    safe = np.where(n == 0, 1.0, n)
    observed = np.trace(confusions, axis1=-2, axis2=-1) / safe
    expected = np.einsum("...i,...i->...", confusions.sum(axis=-1), confusions.sum(axis=-2)) / safe**2
    undefined = (n == 0) | np.isclose(expected, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappas = (observed - expected) / (1 - expected)
    return np.where(undefined, np.nan, kappas)


def fleiss_kappa(counts: np.ndarray) -> float:
    """Return Fleiss' kappa from an items x categories table of how many raters chose each.

    Every item must have the same number of ratings (two or more).
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return float("nan")
    per_item = counts.sum(axis=1)
    raters = per_item[0]
    if raters < 2 or not np.all(per_item == raters):
        raise ValueError("Fleiss' kappa needs the same number (2+) of ratings on every item.")
    items = counts.shape[0]
    p_category = counts.sum(axis=0) / (items * raters)
    p_item = (np.square(counts).sum(axis=1) - raters) / (raters * (raters - 1))
    p_observed = p_item.mean()
    p_expected = float(np.square(p_category).sum())
    if np.isclose(p_expected, 1.0):
        return float("nan")
    return float((p_observed - p_expected) / (1 - p_expected))


def krippendorff_alpha_nominal(counts: np.ndarray) -> float:
    """Return Krippendorff's alpha (nominal) from an items x categories count table.

    Items may have different numbers of ratings; items with fewer than two are ignored.
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2:
        return float("nan")
    per_item = counts.sum(axis=1)
    pairable = per_item >= 2
    counts, per_item = counts[pairable], per_item[pairable]
    if counts.shape[0] == 0:
        return float("nan")
    # Coincidence matrix: each item contributes its ordered pairs of ratings / (m - 1).
    weights = 1.0 / (per_item - 1)
    coincidence = np.einsum("u,uc,uk->ck", weights, counts, counts) - np.diag(weights @ counts)
    marginals = coincidence.sum(axis=1)
    total = marginals.sum()
    observed_disagreement = (total - np.trace(coincidence)) / total
    expected_disagreement = (total**2 - np.square(marginals).sum()) / (total * (total - 1))
    if np.isclose(expected_disagreement, 0.0):
        return float("nan")
    return float(1 - observed_disagreement / expected_disagreement)


def count_table(ratings_per_item: Sequence[Sequence], categories: Sequence) -> np.ndarray:
    """Turn [[rating, rating, ...] per item] into an items x categories count table."""
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(ratings_per_item), len(categories)))
    for row, ratings in enumerate(ratings_per_item):
        for rating in ratings:
            table[row, index[rating]] += 1
    return table


def binary_for_category(ratings_per_item: Sequence[Sequence], category) -> list[list[bool]]:
    """Recode ratings as "is `category`" yes/no, for per-error-class agreement."""
    return [[rating == category for rating in ratings] for ratings in ratings_per_item]
