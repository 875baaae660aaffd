"""The result preview and the execution-backed suggestion (rung 6) for one query.

Both run through `probes/preview.py` `result_preview_run`, the one result preview: the
first rows read through the statement's parsed tree, on the guarded read-only path (sqlglot
guard, read-only transaction, statement timeout, row cap). The comparison itself is the
pure `labelling.compare.compare_result_sets`.
"""

from dataclasses import dataclass, field

from django.db.models import Q
from django.shortcuts import get_object_or_404

from config.roles import MANAGE_GOLDSETS
from labelling.compare import Comparison, compare_result_sets
from labelling.models import Query, QuerySource
from probes.preview import result_preview_run

PREVIEW_ROWS = 20
# The comparison needs whole result sets, not the first 20 rows; past this cap it is not attempted.
COMPARE_ROW_CAP = 5000


@dataclass
class RunOutcome:
    ok: bool
    message: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    truncated: bool = False
    elapsed_ms: float = 0.0


@dataclass
class Preview:
    available: bool
    message: str = ""
    result: RunOutcome | None = None
    reference: RunOutcome | None = None
    comparison: Comparison | None = None


def _run(warehouse, sql: str, rows: int) -> RunOutcome:
    # No timeout of its own: WAREHOUSE_STATEMENT_TIMEOUT_S bounds the preview's statements as
    # it bounds everything run on a warehouse (it held a fixed 5 s whatever the setting said).
    preview = result_preview_run(warehouse=warehouse, sql=sql, rows=rows)
    result = preview.result
    if not result.allowed:
        return RunOutcome(ok=False, message=f"Refused by the read-only guard: {result.reason}")
    if not result.executed or result.error:
        return RunOutcome(ok=False, message=f"Did not run: {result.error or result.reason}")
    return RunOutcome(
        ok=True,
        columns=list(result.columns),
        rows=[tuple(row) for row in result.rows],
        truncated=preview.truncated,
        elapsed_ms=result.elapsed_ms or 0.0,
    )


def query_preview(*, query) -> Preview:
    """Run the query (and its reference SQL, if any) read-only; compare when both ran in full.

    A refusal or an error is shown as such: it is never a verdict on the query.
    """
    if query.warehouse is None:
        return Preview(available=False, message="No preview: this item names no warehouse.")
    # Without reference SQL only the first rows are shown; with it, whole results are compared.
    rows = COMPARE_ROW_CAP if query.reference_sql else PREVIEW_ROWS
    preview = Preview(available=True, result=_run(query.warehouse, query.sql, rows))
    if query.reference_sql:
        preview.reference = _run(query.warehouse, query.reference_sql, rows)
        both = preview.result.ok and preview.reference.ok
        if both and not (preview.result.truncated or preview.reference.truncated):
            preview.comparison = compare_result_sets(
                preview.result.columns, preview.result.rows, preview.reference.columns, preview.reference.rows
            )
        elif both:
            preview.message = f"Not compared: a result has more than {COMPARE_ROW_CAP} rows."
    return preview


def preview_query_for(*, user, pk: int) -> Query:
    """Return the query `user` may run a preview of, or raise Http404.

    Running a preview runs the query's SQL on its warehouse, so a labeller may preview only
    what their queues hold: gold-set items and audit samples, never a live query by id.
    Engineers and admins may preview any query.
    """
    queries = Query.objects.select_related("warehouse")
    if not user.has_perm(MANAGE_GOLDSETS):
        queries = queries.filter(Q(gold_set__isnull=False) | Q(source=QuerySource.AUDIT))
    return get_object_or_404(queries, pk=pk)
