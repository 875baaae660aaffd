"""Two judges on the same items: the paired bootstrap and the exact McNemar test. Pure numpy/scipy.

An item's value for a judge is its reject share there (`metrics.reject_prob`: the share of its
answered verdicts that reject; 0 or 1 on a single draw). The difference B − A on an item is the
difference of the two shares, so the catch-rate difference is the mean of item differences over
wrong items and the false-reject-rate difference the mean over correct items.

The bootstrap resamples whole items, so the pairing is kept: resample r takes the items
`numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))[r]` of the items in the
caller's order (the comparison passes them in external-id order), and each difference's 95%
interval is the 2.5th and 97.5th percentiles (`metrics.percentile`) of its resampled values.
A resample without a wrong (or correct) item has no value for that difference and is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from judges import metrics

BOOTSTRAP_RESAMPLES = 2000
# Resamples drawn and reduced at a time: rows of the same generator stream, so the draws are
# those of one `integers(0, n, size=(resamples, n))` call without holding them all.
RESAMPLE_CHUNK = 100


def bootstrap_index_chunks(n: int, seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> Iterator[np.ndarray]:
    """Yield the bootstrap's item indices, `RESAMPLE_CHUNK` resamples (rows) at a time."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, RESAMPLE_CHUNK):
        yield rng.integers(0, n, size=(min(RESAMPLE_CHUNK, resamples - start), n))


def bootstrap_values(n: int, seed: int, statistic: Callable[[np.ndarray], np.ndarray], resamples: int) -> np.ndarray:
    """Return `statistic(indices)` (one value per row of indices) over every resample, in order."""
    if n == 0:
        return np.full(resamples, np.nan)
    return np.concatenate([statistic(chunk) for chunk in bootstrap_index_chunks(n, seed, resamples)])


def percentile_interval(values: np.ndarray) -> list[float] | None:
    """Return the 95% percentile interval of bootstrap values (NaN ones left out); None when none is left."""
    found = metrics.percentile(values, [2.5, 97.5])
    return None if found is None else [found[0], found[1]]


def masked_means(values: np.ndarray, mask: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Return, per row of indices, the mean of values[index] over the rows' indices where mask (NaN if none)."""
    taken = mask[indices]
    totals = np.where(taken, values[indices], 0.0).sum(axis=1)
    counts = taken.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def paired_differences(
    prob_a: np.ndarray,
    prob_b: np.ndarray,
    is_wrong: np.ndarray,
    *,
    seed: int,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict:
    """Return catch_rate_diff and false_reject_rate_diff (B − A): {"estimate", "ci95"} each.

    `prob_a`, `prob_b` and `is_wrong` are per item, on items both judges judged, in the order
    the bootstrap indexes them. An estimate is None where the stratum has no item.
    """
    diff = np.asarray(prob_b, dtype=float) - np.asarray(prob_a, dtype=float)
    is_wrong = np.asarray(is_wrong, dtype=bool)
    result = {}
    for key, mask in (("catch_rate_diff", is_wrong), ("false_reject_rate_diff", ~is_wrong)):
        estimate = float(diff[mask].mean()) if mask.any() else None
        values = bootstrap_values(len(diff), seed, lambda rows, mask=mask: masked_means(diff, mask, rows), resamples)
        result[key] = {"estimate": estimate, "ci95": percentile_interval(values) if estimate is not None else None}
    return result


def mcnemar_exact(b_only: int, a_only: int) -> float:
    """Return the exact (binomial) McNemar p-value of the discordant pairs; 1.0 when there are none."""
    discordant = int(b_only) + int(a_only)
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest  # noqa: PLC0415 — scipy.stats takes seconds to import; only this test needs it

    return float(binomtest(int(b_only), discordant, 0.5, alternative="two-sided").pvalue)


def mcnemar_strata(rejects_a: np.ndarray, rejects_b: np.ndarray, is_wrong: np.ndarray) -> dict:
    """Return the exact McNemar test per stratum on single draws (one verdict per item each).

    `b_only` counts the items B gets right and A wrong: on wrong items B rejects and A accepts,
    on correct items B accepts and A rejects; `a_only` the other way round.
    """
    rejects_a, rejects_b = np.asarray(rejects_a, dtype=bool), np.asarray(rejects_b, dtype=bool)
    is_wrong = np.asarray(is_wrong, dtype=bool)
    strata = {}
    for name, mask, b_right in (
        ("wrong", is_wrong, rejects_b & ~rejects_a),
        ("correct", ~is_wrong, ~rejects_b & rejects_a),
    ):
        a_right = (rejects_a & ~rejects_b) if name == "wrong" else (~rejects_a & rejects_b)
        b_only, a_only = int((b_right & mask).sum()), int((a_right & mask).sum())
        strata[name] = {"b_only": b_only, "a_only": a_only, "p_value": mcnemar_exact(b_only, a_only)}
    return strata
