"""The verification ladder table (seed 002) as pure functions over reject probabilities.

Rung by rung, in ladder order: the **cumulative** catch and false-reject rates of the
rungs so far taken together (an item is rejected when any of them rejects: for rung k the
reject probability is 1 − Π_{j≤k} (1 − pⱼ), the union `ensembles.pair_overlap` uses), and
the **marginal catch** of rung k, what it adds over the rungs below: cumulative catch at k
minus cumulative catch at k − 1 (at the first rung, its own catch). Catch and false reject
are `judges.metrics.rates` — the product's one definition of each.

Every row rests on one item set, the items every rung judged (an `error` verdict says
nothing about the SQL, so an item a rung could not check is left out of the whole table
rather than changing the denominator from one row to the next).
"""

from __future__ import annotations

import numpy as np

from judges import metrics

RUNG_ORDER = ("parse", "plan", "run", "non_empty", "invariants")


def ladder_items(probs: np.ndarray) -> np.ndarray:
    """Return True for the items every rung judged (no NaN in the row)."""
    probs = np.asarray(probs, dtype=float)
    if probs.ndim != 2 or probs.shape[1] == 0:
        return np.zeros(len(probs), dtype=bool)
    return ~np.isnan(probs).any(axis=1)


def cumulative_reject(probs: np.ndarray) -> np.ndarray:
    """Return items × rungs: the probability that some rung up to and including k rejects."""
    probs = np.asarray(probs, dtype=float)
    return 1 - np.cumprod(1 - probs, axis=1)


def ladder_table(*, rungs: list[str], probs: np.ndarray, is_wrong: np.ndarray) -> list[dict]:
    """Return the ladder table: one {"rung", "catch", "false_reject", "marginal_catch"} per rung.

    `probs` is items × rungs (columns in the order of `rungs`, the ladder's order), NaN
    where a rung has no answered verdict. Rates are None when the item set has no wrong
    (catch) or no correct (false reject) item.
    """
    probs = np.asarray(probs, dtype=float).reshape(len(is_wrong), len(rungs))
    keep = ladder_items(probs)
    wrong = np.asarray(is_wrong, dtype=bool)[keep]
    cumulative = cumulative_reject(probs[keep])
    table = []
    below = 0.0
    for column, rung in enumerate(rungs):
        figures = metrics.rates(cumulative[:, column], wrong)
        catch = figures["catch_rate"]
        table.append(
            {
                "rung": rung,
                "catch": catch,
                "false_reject": figures["false_reject_rate"],
                "marginal_catch": None if catch is None else catch - below,
            }
        )
        below = catch if catch is not None else below
    return table


def rung_columns(rung_of_column: dict[int, tuple[str, int]]) -> list[tuple[str, int]]:
    """Choose one column per rung (its latest version) and order them up the ladder.

    `rung_of_column` maps a judge column to (rung, version number); returns (rung, column).
    """
    chosen: dict[str, tuple[int, int]] = {}
    for column, (rung, number) in rung_of_column.items():
        if rung in RUNG_ORDER and (rung not in chosen or number > chosen[rung][0]):
            chosen[rung] = (number, column)
    return [(rung, chosen[rung][1]) for rung in RUNG_ORDER if rung in chosen]
