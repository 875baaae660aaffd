"""Is a judge fit to gate, to monitor, or only to explore? A statement from interval bounds.

Pure functions. On the report's items (one split, examples left out), against the thresholds
the gold set sets (`FitnessThresholds`, read by `fitness_thresholds_of`; defaults in brackets):

* **gate** when the catch rate's Wilson lower bound is at least `catch_lower` (0.8) and the
  false-reject rate's upper bound at most `false_reject_upper` (0.05);
* else **monitor** when κ vs gold's lower bound is at least `kappa_lower` (0.6), κ's
  interval being a bootstrap of the items (seed 0; `kappa_interval` draws it by item groups);
* else **explore**.

Each reason names the threshold it was held to and whose it is.

`needed` says how many more labelled items would move the judge up a level if its rates held
(`judges.sample_size.items_for_bound`): wrong and correct items for gate, items for monitor.
None where more items cannot help (the rate itself is on the wrong side of the threshold).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from judges import metrics
from judges.paired import BOOTSTRAP_RESAMPLES, percentile_interval
from judges.sample_size import items_for_bound
from labelling.agreement import cohen_kappas_from_confusions
from labelling.models import GoldSet

LEVELS = ("explore", "monitor", "gate")


def _default(field: str) -> float:
    return GoldSet._meta.get_field(field).default


@dataclass(frozen=True)
class FitnessThresholds:
    """The bounds a judge must clear: gate on catch and false reject, monitor on κ; `owner` says whose they are."""

    catch_lower: float = _default("fitness_gate_catch_lower")
    false_reject_upper: float = _default("fitness_gate_false_reject_upper")
    kappa_lower: float = _default("fitness_monitor_kappa_lower")
    owner: str = "Docket's default"


DEFAULT_THRESHOLDS = FitnessThresholds()


def fitness_thresholds_of(gold_set: GoldSet) -> FitnessThresholds:
    """Return the thresholds a gold set holds its judges to."""
    return FitnessThresholds(
        catch_lower=gold_set.fitness_gate_catch_lower,
        false_reject_upper=gold_set.fitness_gate_false_reject_upper,
        kappa_lower=gold_set.fitness_monitor_kappa_lower,
        owner=f"gold set {gold_set.name}",
    )


def _threshold(value: float, thresholds: FitnessThresholds) -> str:
    """Write a threshold as set (0.80, 0.05, 0.775) and whose it is."""
    text = f"{value:.2f}" if round(value, 2) == value else f"{value:g}"
    return f"{text} ({thresholds.owner}'s threshold)"


def kappa_interval(probs: np.ndarray, is_wrong: np.ndarray, *, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES):
    """Return κ vs gold's 95% bootstrap interval over the given items.

    A resample of the n items (drawn with replacement) gives a 2×2 table that depends only on
    how many draws land on items of each distinct (reject share, gold) pair, and those counts
    are multinomial. So the bootstrap draws the counts (`Generator.multinomial`, `seed`, over
    the kinds of item: correct ones first, each by ascending reject share): the
    same distribution as resampling the items one by one, at a cost that does not grow with
    the items (issue 33: 2,000 resamples of every item took most of a large report's time).
    """
    a = np.asarray(probs, dtype=float)
    b = np.asarray(is_wrong, dtype=float)
    if len(a) == 0:
        return None
    kinds = [(np.unique(a[b == g], return_counts=True), g) for g in (0.0, 1.0)]  # sorted: gold, then share
    share = np.concatenate([values for (values, _), _ in kinds])
    gold = np.concatenate([np.full(len(values), g) for (values, _), g in kinds])
    sizes = np.concatenate([counts for (_, counts), _ in kinds])
    draws = np.random.default_rng(seed).multinomial(len(a), sizes / len(a), size=resamples)
    cells = np.stack([(1 - share) * (1 - gold), (1 - share) * gold, share * (1 - gold), share * gold], axis=1)
    return percentile_interval(cohen_kappas_from_confusions((draws @ cells).reshape(-1, 2, 2)))


def _more(total: int | None, have: int) -> int | None:
    return None if total is None else max(0, total - have)


def kappa_items_needed(
    kappa: float | None, interval, items: int, kappa_lower: float = DEFAULT_THRESHOLDS.kappa_lower
) -> int | None:
    """Return the extra items for κ's lower bound to reach `kappa_lower` (the half-width shrinks as 1/√n)."""
    if kappa is None or interval is None or kappa <= kappa_lower or items == 0:
        return None
    half = kappa - interval[0]
    if half <= kappa - kappa_lower:
        return 0
    return max(0, math.ceil(items * (half / (kappa - kappa_lower)) ** 2) - items)


def fitness_statement(
    *,
    catch: float | None,
    catch_ci,
    wrong: int,
    false_reject: float | None,
    false_reject_ci,
    correct: int,
    kappa: float | None,
    kappa_ci,
    items: int,
    thresholds: FitnessThresholds = DEFAULT_THRESHOLDS,
) -> dict:
    """Return {"level", "reasons", "needed"} from the bounds (None bounds: not measured, never fit)."""
    reasons = []
    t = thresholds
    catch_ok = catch_ci is not None and catch_ci[0] >= t.catch_lower
    false_reject_ok = false_reject_ci is not None and false_reject_ci[1] <= t.false_reject_upper
    kappa_ok = kappa_ci is not None and kappa_ci[0] >= t.kappa_lower
    if catch_ci is None:
        reasons.append("no wrong item judged: catch rate not measured")
    else:
        relation = "at least" if catch_ok else "below"
        reasons.append(f"catch rate's lower bound {catch_ci[0]:.3f} is {relation} {_threshold(t.catch_lower, t)}")
    if false_reject_ci is None:
        reasons.append("no correct item judged: false-reject rate not measured")
    else:
        relation = "at most" if false_reject_ok else "above"
        reasons.append(
            f"false-reject rate's upper bound {false_reject_ci[1]:.3f} is {relation} "
            f"{_threshold(t.false_reject_upper, t)}"
        )
    if catch_ok and false_reject_ok:
        return {"level": "gate", "reasons": reasons, "needed": {}}
    needed = {
        "wrong": 0 if catch_ok else _more(items_for_bound(catch, t.catch_lower, side="lower"), wrong),
        "correct": 0
        if false_reject_ok
        else _more(items_for_bound(false_reject, t.false_reject_upper, side="upper"), correct),
    }
    if kappa_ci is None:
        reasons.append("κ vs gold not measured")
    else:
        relation = "at least" if kappa_ok else "below"
        reasons.append(f"κ vs gold's lower bound {kappa_ci[0]:.3f} is {relation} {_threshold(t.kappa_lower, t)}")
    if kappa_ok:
        return {"level": "monitor", "reasons": reasons, "needed": {"to_gate": needed}}
    return {
        "level": "explore",
        "reasons": reasons,
        "needed": {
            "to_monitor": {"items": kappa_items_needed(kappa, kappa_ci, items, t.kappa_lower)},
            "to_gate": needed,
        },
    }


def class_fitness(
    overall: dict,
    *,
    catch: float | None,
    catch_ci,
    wrong: int,
    false_reject_ci,
    thresholds: FitnessThresholds = DEFAULT_THRESHOLDS,
) -> dict:
    """Return one error class's level: gate on its own catch bound and the overall false-reject bound.

    Below gate, the overall level (a class is not monitored on its own κ).
    """
    catch_ok = catch_ci is not None and catch_ci[0] >= thresholds.catch_lower
    false_reject_ok = false_reject_ci is not None and false_reject_ci[1] <= thresholds.false_reject_upper
    if catch_ok and false_reject_ok:
        return {"level": "gate", "needed": {}}
    level = "monitor" if overall["level"] in ("monitor", "gate") else "explore"
    more = 0 if catch_ok else _more(items_for_bound(catch, thresholds.catch_lower, side="lower"), wrong)
    return {"level": level, "needed": {"wrong": more}}


def judged_kappa_interval(probs: np.ndarray, is_wrong: np.ndarray):
    """Return κ vs gold's bootstrap interval over the items the judge judged (None: it judged none)."""
    judged = ~np.isnan(probs)
    return kappa_interval(probs[judged], is_wrong[judged]) if judged.any() else None


def judged_kappa_intervals(probs: np.ndarray, is_wrong: np.ndarray) -> list:
    """Return `judged_kappa_interval` of every column of `probs` (items × judges), drawn concurrently.

    NumPy draws the multinomials without holding the GIL, so the judges' bootstraps share
    the cores (40 ms a judge over ~300 kinds of item; issue 33). Each judge's draw is seeded
    on its own: the intervals are those of one call per judge.
    """
    columns = range(probs.shape[1])
    if len(columns) < 2 or (os.cpu_count() or 1) < 2:
        return [judged_kappa_interval(probs[:, column], is_wrong) for column in columns]
    with ThreadPoolExecutor(max_workers=min(len(columns), os.cpu_count())) as pool:
        return list(pool.map(lambda column: judged_kappa_interval(probs[:, column], is_wrong), columns))


def judge_fitness(
    entry: dict,
    probs: np.ndarray,
    is_wrong: np.ndarray,
    error_class: np.ndarray,
    kappa_ci,
    thresholds: FitnessThresholds = DEFAULT_THRESHOLDS,
) -> dict:
    """Return {"fitness", "fitness_by_error_class"} of one judge entry of the report.

    `probs`, `is_wrong` and `error_class` are the report's columns, `kappa_ci` the judge's
    `judged_kappa_interval`; `thresholds` the gold set's.
    """
    overall = fitness_statement(
        catch=entry["catch_rate"],
        catch_ci=entry["catch_rate_ci95"],
        wrong=entry["judged_wrong"],
        false_reject=entry["false_reject_rate"],
        false_reject_ci=entry["false_reject_rate_ci95"],
        correct=entry["judged_correct"],
        kappa=entry["kappa_vs_gold"],
        kappa_ci=kappa_ci,
        items=int((~np.isnan(probs)).sum()),
        thresholds=thresholds,
    )
    by_class = {
        slug: class_fitness(
            overall,
            catch=figure["rate"],
            catch_ci=figure["ci95"],
            wrong=figure["n"],
            false_reject_ci=entry["false_reject_rate_ci95"],
            thresholds=thresholds,
        )
        for slug, figure in metrics.catch_rates_by_error_class(probs, is_wrong, error_class).items()
    }
    return {"fitness": overall, "fitness_by_error_class": by_class, "kappa_vs_gold_ci95": kappa_ci}
