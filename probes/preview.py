"""The result preview: a query's first rows, and on request its row count, read through its parsed tree.

Every place that shows or sends a query's first rows calls `result_preview_run`: the
labeller's item panel (`labelling/preview.py`), a judge's prompt (`judges/backends/prompt.py`)
and the analyst's triage item (`triage/pipeline.py`). The statement is read once by
`probes.guard.parse_sql`, and the text that runs is written back from the tree:

- the first rows: the statement with a LIMIT set on its tree, one more than the preview
  shows (so a cut is known); a statement that already limits or skips rows itself (LIMIT,
  FETCH, OFFSET, TOP) is wrapped whole as a subquery under that LIMIT, so its own cut stands;
- the row count: `SELECT COUNT(*) FROM (<statement>) AS counted`, built on the tree.

A text the guard refuses, or that is not one query, runs unchanged: `run_readonly` refuses it
or caps it as it would any other, so a refusal or an error is shown as such. Either way the
warehouse runs through `probes.execution.run_readonly` (guard, read-only transaction,
statement timeout, row cap).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError

from probes.allowlist import sqlglot_dialect
from probes.execution import run_readonly
from probes.guard import parse_sql
from probes.results import ExecutionResult

# What makes a statement cut or skip rows by itself: a LIMIT set over it would undo that.
OWN_CUTS = ("limit", "fetch", "offset")


@dataclass
class ResultPreview:
    """What ran (`result`, its rows cut to the preview's size), whether there were more, and the count if asked."""

    result: ExecutionResult
    truncated: bool = False
    row_count: int | None = None  # known when not truncated, or counted on request


def _query_tree(sql: str, dialect: str) -> exp.Query | None:
    parsed = parse_sql(sql, dialect)
    tree = parsed.tree
    if not parsed.verdict.allowed or not isinstance(tree, exp.Query):
        return None
    return tree.copy()  # parse_sql's trees are shared: never change one in place


def _cuts_rows_itself(tree: exp.Query) -> bool:
    return any(tree.args.get(cut) for cut in OWN_CUTS) or bool(isinstance(tree, exp.Select) and tree.args.get("top"))


def first_rows_sql(sql: str, dialect: str, rows: int) -> str:
    """The text that reads at most `rows` rows of the statement, written from its tree (or the text itself)."""
    tree = _query_tree(sql, dialect)
    if tree is None:
        return sql
    try:
        if _cuts_rows_itself(tree):
            limited = exp.select("*").from_(tree.subquery("preview")).limit(rows)
        else:
            limited = tree.limit(rows)
        return limited.sql(dialect=sqlglot_dialect(dialect))
    except SqlglotError:
        return sql


def row_count_sql(sql: str, dialect: str) -> str | None:
    """`SELECT COUNT(*) FROM (<statement>) AS counted`, written from its tree; None when it is not one query."""
    tree = _query_tree(sql, dialect)
    if tree is None:
        return None
    try:
        counted = exp.select(exp.Count(this=exp.Star())).from_(tree.subquery("counted"))
        return counted.sql(dialect=sqlglot_dialect(dialect))
    except SqlglotError:
        return None


def result_preview_run(
    *, warehouse, sql: str, rows: int, timeout_s: float | None = None, count: bool = False
) -> ResultPreview:
    """Run the statement's first `rows` rows read-only; with `count`, count them all when there are more."""
    result = run_readonly(
        warehouse=warehouse, sql=first_rows_sql(sql, warehouse.dialect, rows + 1), row_cap=rows + 1, timeout_s=timeout_s
    )
    if not result.executed or result.error:
        return ResultPreview(result=result)
    truncated = len(result.rows) > rows or result.truncated
    result.rows = list(result.rows[:rows])
    preview = ResultPreview(result=result, truncated=truncated, row_count=None if truncated else len(result.rows))
    if truncated and count:
        counting = row_count_sql(sql, warehouse.dialect)
        counted = run_readonly(warehouse=warehouse, sql=counting, row_cap=1, timeout_s=timeout_s) if counting else None
        if counted is not None and counted.executed and not counted.error and counted.rows:
            preview.row_count = counted.rows[0][0]
    return preview
