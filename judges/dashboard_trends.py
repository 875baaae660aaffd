"""The dashboard's view of time and of single items: per-run trends and confusion matrices.

No figure is defined here. Each run's catch and false-reject rates are `metrics.rates` of
that run alone, on the verdict rows the dashboard already loaded for its run selection (each
row's draw key names its run): the figures a report on that one run gives. The confusion
matrix counts `confusion.majority_outcomes` (the tie rule) against the gold labels with
`confusion.confusion_matrix`.
"""

from __future__ import annotations

import numpy as np

from judges import confusion, metrics
from judges.calibration_data import CalibrationData
from judges.charts import PALETTE
from judges.models import CalibrationRun
from judges.verdict_rows import DRAW_RUN_SHIFT

GOLD_ROWS = ("wrong", "correct")


def judge_trends_get(*, data: CalibrationData) -> list[dict]:
    """Return one series per judge: its catch and false-reject rate in each selected run, oldest first.

    A series follows a judge (by slug) across its versions, so a prompt change shows as the
    next point of the same line; each point names its run and judge version. A run's time
    is when it finished, or when it was created if it has not finished. Each run's figures
    come from the verdict rows already loaded (their draw key names the run), so the page
    reads the verdicts once however many runs it shows.
    """
    runs = CalibrationRun.objects.filter(pk__in=data.run_ids).only("pk", "label", "created_at", "finished_at")
    runs = sorted(runs, key=lambda run: (run.finished_at or run.created_at, run.pk))
    colour_of = {}
    for judge in data.judges:
        colour_of.setdefault(judge.slug, PALETTE[len(colour_of) % len(PALETTE)])
    series: dict[str, dict] = {}
    rows_of_run = rows_by_run(data)
    for run in runs:
        for column, figures in run_rates(data, rows_of_run.get(run.pk, np.zeros(0, dtype=np.int64))):
            judge = data.judges[column]
            entry = series.setdefault(
                judge.slug,
                {"name": judge.name, "colour": colour_of.get(judge.slug, PALETTE[0]), "points": []},
            )
            entry["points"].append(
                {
                    "run": run.pk,
                    "run_label": run.label or f"run {run.pk}",
                    "at": run.finished_at or run.created_at,
                    "judge": judge.label,
                    "judge_version_id": judge.id,
                    "catch_rate": figures["catch_rate"],
                    "false_reject_rate": figures["false_reject_rate"],
                    "judged_wrong": figures["judged_wrong"],
                    "judged_correct": figures["judged_correct"],
                }
            )
    return list(series.values())


def rows_by_run(data: CalibrationData) -> dict[int, np.ndarray]:
    """Return {run id: the indices of its verdict rows}, found with one sort (not one pass over every row per run)."""
    draw_key = data.rows[3]
    run_ids = np.array(sorted(data.run_ids), dtype=np.int64)
    if not len(draw_key) or not len(run_ids):
        return {}
    run_index = np.searchsorted(run_ids, np.asarray(draw_key, dtype=np.int64) >> DRAW_RUN_SHIFT)
    # Few runs: a stable sort of small integers is a radix sort, linear in the rows.
    run_index = run_index.astype(np.int16 if len(run_ids) < 2**15 else np.int64)
    order = np.argsort(run_index, kind="stable")
    bounds = np.searchsorted(run_index[order], np.arange(len(run_ids) + 1))
    return {int(run): order[bounds[i] : bounds[i + 1]] for i, run in enumerate(run_ids.tolist())}


def run_rates(data: CalibrationData, rows: np.ndarray) -> list[tuple[int, dict]]:
    """Return (column, `metrics.rates`) of each judge with verdicts among one run's rows, on those rows alone."""
    item, column, decision, _, _ = data.rows
    n_items, n_judges = len(data.is_wrong), len(data.judges)
    counts = metrics.counts_from_rows(item[rows], column[rows], decision[rows], n_items, n_judges)
    probs = metrics.reject_prob(counts)
    present = np.unique(column[rows]).tolist()
    return [(index, metrics.rates(probs[:, index], data.is_wrong)) for index in present]


def confusion_tables(*, data: CalibrationData) -> list[dict]:
    """Return, per judge column, its gold × majority-decision table with each cell's count."""
    tables = []
    for column, judge in enumerate(data.judges):
        matrix = confusion.confusion_matrix(confusion.majority_outcomes(data.counts, column), data.is_wrong)
        rows = [
            {
                "gold": gold,
                "cells": [
                    {"gold": gold, "decision": decision, "count": int(matrix[r, c])}
                    for c, decision in enumerate(confusion.OUTCOMES)
                ],
            }
            for r, gold in enumerate(GOLD_ROWS)
        ]
        tables.append({"judge": judge, "rows": rows, "total": int(matrix.sum())})
    return tables


def confusion_cell_items(*, data: CalibrationData, judge_version_id: int, gold: str, decision: str) -> dict:
    """Return the judge and the items of one confusion-matrix cell (the same count the table shows).

    Raises ValueError for an unknown judge, gold row or decision.
    """
    if gold not in GOLD_ROWS or decision not in confusion.OUTCOMES:
        raise ValueError(
            f"gold must be one of {', '.join(GOLD_ROWS)} and decision one of {', '.join(confusion.OUTCOMES)}"
        )
    columns = [column for column, judge in enumerate(data.judges) if judge.id == judge_version_id]
    if not columns:
        raise ValueError("That judge version has no verdicts in this run selection.")
    column = columns[0]
    outcomes = confusion.majority_outcomes(data.counts, column)
    in_gold = data.is_wrong if gold == "wrong" else ~data.is_wrong
    rows = np.flatnonzero(in_gold & (outcomes == confusion.OUTCOMES.index(decision)))
    items = [
        {
            "query_id": int(data.query_ids[row]),
            "external_id": data.external_ids[row],
            "error_class": data.error_class[row],
            "rejects": int(data.counts.rejects[row, column]),
            "accepts": int(data.counts.accepts[row, column]),
            "errors": int(data.counts.errors[row, column]),
        }
        for row in rows.tolist()
    ]
    return {"judge": data.judges[column], "gold": gold, "decision": decision, "items": items}
