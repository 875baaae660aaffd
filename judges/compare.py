"""Is judge B really better than judge A on the same items? The `compare_judges` report.

`comparison_from_data` works on loaded arrays (`judges.calibration_data`); `comparison_build`
loads a gold-set version (one part of its split, if asked) and builds it. The items are those
both judge versions judged, in external-id order (the order the bootstrap indexes, so anyone
holding the ids and the seed can redraw the resamples); the statistics are `judges.paired`.
"""

from __future__ import annotations

import numpy as np

from judges.calibration_data import CalibrationData, load_calibration
from judges.paired import BOOTSTRAP_RESAMPLES, mcnemar_strata, paired_differences
from judges.sample_size import DEFAULT_POWER, items_to_detect
from labelling.models import GoldSetVersion
from labelling.split_models import SPLIT_ALL

# The difference the summary says how many items would detect, when none is detectable yet.
DETECTABLE_DIFFERENCE = 0.05

# What each difference means, in words: (stratum, B higher, B lower).
WORDS = {
    "catch_rate_diff": ("wrong", "B catches more wrong items", "B catches fewer wrong items", "catch rate"),
    "false_reject_rate_diff": (
        "correct",
        "B falsely rejects more correct items",
        "B falsely rejects fewer correct items",
        "false-reject rate",
    ),
}


def _interval_text(estimate: float, interval: list[float]) -> str:
    return f"{estimate:+.2f} [{interval[0]:+.2f}, {interval[1]:+.2f}]"


def difference_sentence(key: str, figure: dict, diffs: np.ndarray, detect: float = DETECTABLE_DIFFERENCE) -> str:
    """Say what one difference means: which judge is better with its interval, or how many items would tell."""
    stratum, higher, lower, name = WORDS[key]
    estimate, interval = figure["estimate"], figure["ci95"]
    if estimate is None:
        return f"no {stratum} items both judged, so no {name} difference"
    if interval[0] > 0:
        return f"{higher}: {_interval_text(estimate, interval)}"
    if interval[1] < 0:
        return f"{lower}: {_interval_text(estimate, interval)}"
    variance = float(np.var(diffs, ddof=1)) if len(diffs) > 1 else None
    needed = items_to_detect(detect, paired_variance=variance)
    return (
        f"no {name} difference detectable on {len(diffs)} {stratum} items ({_interval_text(estimate, interval)}); "
        f"about {needed} would detect a difference of {detect:.2f} with {DEFAULT_POWER:.0%} power"
    )


def comparison_from_data(data: CalibrationData, ref_a: str, ref_b: str, *, seed: int = 0) -> dict:
    """Return the comparison (the `compare_judges --format json` contract) of two judge columns.

    Raises ValueError for a judge without verdicts here, or when A and B are one version.
    """
    a, b = data.judge_index(ref_a), data.judge_index(ref_b)
    if a == b:
        raise ValueError(f"--a and --b are the same judge version ({data.judges[a].label})")
    probs = data.probs
    both = np.flatnonzero(~np.isnan(probs[:, a]) & ~np.isnan(probs[:, b]))
    order = sorted(both.tolist(), key=lambda i: data.external_ids[i])
    prob_a, prob_b = probs[order, a], probs[order, b]
    is_wrong = data.is_wrong[order]
    figures = paired_differences(prob_a, prob_b, is_wrong, seed=seed)
    decided = data.counts.decided
    single = bool(order) and (decided[order, a] == 1).all() and (decided[order, b] == 1).all()
    mcnemar = mcnemar_strata(prob_a == 1, prob_b == 1, is_wrong) if single else None
    item_diffs = prob_b - prob_a
    sentences = [
        difference_sentence(key, figures[key], item_diffs[mask])
        for key, mask in (("catch_rate_diff", is_wrong), ("false_reject_rate_diff", ~is_wrong))
    ]
    if mcnemar is None and order:
        sentences.append("no McNemar test: a judge has more than one verdict on some item (repeats)")
    wrong = int(is_wrong.sum())
    return {
        "a": {"name": data.judges[a].name, "version": data.judges[a].number},
        "b": {"name": data.judges[b].name, "version": data.judges[b].number},
        "split": data.split,
        "items": {"total": len(order), "wrong": wrong, "correct": len(order) - wrong},
        "catch_rate_diff": figures["catch_rate_diff"],
        "false_reject_rate_diff": figures["false_reject_rate_diff"],
        "mcnemar": mcnemar,
        "bootstrap": {"seed": seed, "resamples": BOOTSTRAP_RESAMPLES},
        "differing_items": [data.external_ids[i] for i, d in zip(order, item_diffs, strict=True) if d != 0],
        "summary": "; ".join(sentences) + ".",
    }


def comparison_build(
    *, gold_set_version: GoldSetVersion, a: str, b: str, split: str = SPLIT_ALL, seed: int = 0
) -> dict:
    """Load a gold-set version (every completed run; one part of its split) and compare judges a and b."""
    data = load_calibration(gold_set_version=gold_set_version, split=split)
    return comparison_from_data(data, a, b, seed=seed)
