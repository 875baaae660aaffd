"""The verification ladder table (seed 002) as pure functions over the rungs' draws.

Rung by rung, in ladder order: the **cumulative** catch and false-reject rates of the
rungs so far taken together — an item is rejected when any of them rejects, on aligned
draws: rung k's row is the `any` ensemble of rungs 1..k (`judges.ensembles.ensemble_rates`,
the rates of `ensemble_metrics`, the one definition of judges together, which the pairs'
union uses too) — and the **marginal catch** of rung k, what it adds over the rungs below:
cumulative catch at k minus cumulative catch at k − 1 (at the first rung, its own catch). Catch and false reject
are `judges.metrics.rates` — the product's one definition of each.

Every row rests on one item set, the items every rung judged (an `error` verdict says
nothing about the SQL, so an item a rung could not check is left out of the whole table
rather than changing the denominator from one row to the next). Each row's draws are the
aligned draws of its own rungs; rungs are deterministic, so with one verdict per item the
draw sets of all rows are the same.
"""

from __future__ import annotations

import numpy as np

from judges.draws import DrawTable, aligned_counts
from judges.ensembles import ensemble_rates

RUNG_ORDER = ("parse", "plan", "run", "non_empty", "invariants")


def ladder_items(draws: DrawTable, columns: list[int]) -> np.ndarray:
    """Return True for the items every rung judged (each has at least one answered verdict)."""
    return aligned_counts(draws, columns) > 0


def ladder_table(*, rungs: list[str], draws: DrawTable, columns: list[int], is_wrong: np.ndarray) -> list[dict]:
    """Return the ladder table: one {"rung", "catch", "false_reject", "marginal_catch"} per rung.

    `columns` are the rungs' judge columns of `draws`, in the order of `rungs` (the
    ladder's order). Rates are None when the item set has no wrong (catch) or no correct
    (false reject) item.
    """
    keep = ladder_items(draws, columns)
    table = []
    below = 0.0
    for index, rung in enumerate(rungs):
        figures, _ = ensemble_rates(draws, is_wrong, columns[: index + 1], "any", items=keep)
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
