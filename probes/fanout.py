"""Fan-out: find a join that multiplies the rows being aggregated, then let the warehouse count.

`detect_fanout` needs no model. From the SQL's tree and the catalogue's keys it finds, for
each aggregated measure (SUM, AVG, COUNT of a column), the table that measure belongs to
(its grain) and walks the join graph outward from it: a step onto a table whose join
columns are not a unique key of that table repeats the grain's rows. It then writes the
probe itself: the query's own FROM/JOIN/WHERE with `COUNT(*)` against `COUNT(DISTINCT
<grain key>)` (`probes.fanout_probe.probe_text`).

`check_fanout` probes a suspicion through the read-only path and stores a ProbeRun. The
probe is one Docket wrote from the subject SQL, or a given text with exactly that shape
over the subject's FROM/JOIN (`probes.fanout_probe`); any other text is refused. It fails
open: a refused probe or one that errors is recorded as refused/error and never confirms
anything (seed 003); `ProbeRun.check_outcome` reads both as a fault.
"""

import time
from collections import deque
from dataclasses import dataclass

from django.db import transaction
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from probes.catalogue_index import CatalogueIndex, TableInfo, catalogue_index
from probes.execution import run_readonly
from probes.fanout_probe import grain_key_expression, probe_plan, probe_text
from probes.guard import parse_sql
from probes.hypotheses import JoinFanoutHypothesis
from probes.models import Catalogue, ProbeOutcome, ProbeRun, Warehouse
from probes.selectors import catalogue_get_latest

MEASURE_TYPES = (exp.Sum, exp.Avg, exp.Count)


@dataclass
class Fanout:
    scope: Scope
    grain_alias: str
    grain: TableInfo
    join_alias: str
    join_label: str


def _table_info(scope: Scope, alias: str, index: CatalogueIndex) -> TableInfo | None:
    source = scope.sources.get(alias)
    if isinstance(source, exp.Table):
        return index.table(source)
    return None


def _owner_alias(column: exp.Column, scope: Scope, index: CatalogueIndex) -> str | None:
    """Return the alias of the source this column belongs to, using the catalogue if unqualified."""
    if column.table:
        return column.table if column.table in scope.sources else None
    for alias in scope.sources:
        info = _table_info(scope, alias, index)
        if info is not None and column.name.lower() in info.columns:
            return alias
    return None


def _driving_alias(select: exp.Select) -> str | None:
    source = select.args.get("from_") or select.args.get("from")
    return source.this.alias_or_name if source is not None else None


def _value_columns(argument: exp.Expression):
    """Columns whose values are aggregated: not those only tested in a condition (CASE WHEN ...)."""
    for column in argument.find_all(exp.Column):
        if not isinstance(column.find_ancestor(exp.Predicate, exp.AggFunc), exp.Predicate):
            yield column


def _groups_by_key_of(select: exp.Select, scope: Scope, alias: str, index: CatalogueIndex) -> bool:
    """True when GROUP BY holds a whole key of the alias's table: COUNT(*) then counts its children."""
    group = select.args.get("group")
    info = _table_info(scope, alias, index)
    if group is None or info is None:
        return False
    grouped = {
        column.name.lower()
        for expression in group.expressions
        for column in expression.find_all(exp.Column)
        if _owner_alias(column, scope, index) == alias
    }
    return any(key and key <= grouped for key in info.keys)


def _measures(select: exp.Select, scope: Scope, index: CatalogueIndex) -> list[set[str]]:
    """One set of aliases per aggregate that repeated rows would change (SUM, AVG, COUNT).

    COUNT(*) counts rows of the driving (FROM) table; COUNT(DISTINCT ...), MIN and MAX are
    immune to repeated rows and are skipped.
    """
    measures: list[set[str]] = []
    for projection in [*select.expressions, select.args.get("having")]:
        if projection is None:
            continue
        for agg in projection.find_all(*MEASURE_TYPES):
            argument = agg.this
            if isinstance(argument, exp.Distinct) or argument is None:
                continue
            if isinstance(argument, exp.Star):
                driving = _driving_alias(select)
                counted = driving and _table_info(scope, driving, index) is not None
                if counted and not _groups_by_key_of(select, scope, driving, index):
                    measures.append({driving})
                continue
            aliases = set()
            for column in _value_columns(argument):
                alias = _owner_alias(column, scope, index)
                if alias and _table_info(scope, alias, index) is not None:
                    aliases.add(alias)
            if aliases:
                measures.append(aliases)
    return measures


def _join_edges(select: exp.Select, scope: Scope, index: CatalogueIndex) -> dict[tuple[str, str], dict]:
    """Map (alias_a, alias_b) → {alias: set of lower-case columns equated across the pair}."""
    edges: dict[tuple[str, str], dict[str, set[str]]] = {}
    conditions = [join.args.get("on") for join in select.args.get("joins") or []]
    conditions.append(select.args.get("where"))
    for condition in conditions:
        if condition is None:
            continue
        for eq in condition.find_all(exp.EQ):
            left, right = eq.this, eq.expression
            if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
                continue
            a, b = _owner_alias(left, scope, index), _owner_alias(right, scope, index)
            if not a or not b or a == b:
                continue
            key = tuple(sorted((a, b)))
            entry = edges.setdefault(key, {a: set(), b: set()})
            entry[a].add(left.name.lower())
            entry[b].add(right.name.lower())
    for join in select.args.get("joins") or []:
        using = join.args.get("using")
        if using:
            joined = join.alias_or_name
            earlier = [a for a in scope.selected_sources if a != joined]
            for other in earlier[:1]:
                key = tuple(sorted((joined, other)))
                entry = edges.setdefault(key, {joined: set(), other: set()})
                for column in using:
                    entry[joined].add(column.name.lower())
                    entry[other].add(column.name.lower())
    return edges


def _unique_on(scope: Scope, alias: str, columns: set[str], index: CatalogueIndex) -> bool:
    """Whether the columns hold a unique key of the source; unknown shapes count as unique."""
    source = scope.sources.get(alias)
    if isinstance(source, exp.Table):
        info = index.table(source)
        if info is None:
            return True
        return any(key and key <= columns for key in info.keys)
    if isinstance(source, Scope) and isinstance(source.expression, exp.Select):
        inner = source.expression
        group = inner.args.get("group")
        if group is not None:
            grouped = {e.alias_or_name.lower() for e in group.expressions}
            outputs = {
                s.alias_or_name.lower()
                for s in inner.expressions
                if s.unalias().alias_or_name.lower() in grouped or s.alias_or_name.lower() in grouped
            }
            return bool(outputs) and outputs <= columns
        if inner.args.get("distinct") is not None:
            return {name.lower() for name in inner.named_selects} <= columns
        return True
    return True


def _fanning_tables(scope, edges, start: str, index: CatalogueIndex) -> list[str]:
    """Aliases reached from `start` through a step onto a non-unique key (they repeat its rows)."""
    visited, queue, fanning = {start}, deque([start]), []
    while queue:
        current = queue.popleft()
        for (a, b), columns in edges.items():
            if current not in (a, b):
                continue
            other = b if current == a else a
            if other in visited:
                continue
            visited.add(other)
            queue.append(other)
            if not _unique_on(scope, other, columns[other], index):
                fanning.append(other)
    return fanning


def _find_fanout(scope: Scope, index: CatalogueIndex) -> Fanout | None:
    select = scope.expression
    if not isinstance(select, exp.Select) or not select.args.get("joins"):
        return None
    measures = _measures(select, scope, index)
    if not measures:
        return None
    edges = _join_edges(select, scope, index)
    for aliases in measures:
        for grain_alias in sorted(aliases):
            fanning = _fanning_tables(scope, edges, grain_alias, index)
            # `SUM(oi.quantity * p.list_price)` is meant at the items' grain: a table of the
            # same aggregate on the many side says the measure is at that finer grain.
            if not fanning or set(fanning) & aliases:
                continue
            other = fanning[0]
            source = scope.sources.get(other)
            label = source.name if isinstance(source, exp.Table) else other
            return Fanout(scope, grain_alias, _table_info(scope, grain_alias, index), other, label)
    return None


def detect_fanout(sql: str, catalogue: Catalogue | dict, dialect: str = "sqlite") -> JoinFanoutHypothesis:
    """Suspect fan-out from the SQL and the catalogue's keys alone; write the probe that decides it."""
    index = catalogue_index(catalogue)
    tree = parse_sql(sql, dialect).tree  # the guard's parse, shared; never mutated here
    if tree is None:
        return JoinFanoutHypothesis.not_suspected()
    try:
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, KeyError, ValueError):
        return JoinFanoutHypothesis.not_suspected()
    # The outermost scope last in traversal order: look there first.
    for scope in reversed(scopes):
        fanout = _find_fanout(scope, index)
        if fanout is None:
            continue
        info = fanout.grain
        key = info.primary_key or next((sorted(k) for k in info.keys if k), None)
        key_expression, grain_key = grain_key_expression(fanout.grain_alias, info, key, dialect)
        probe_sql = probe_text(tree, fanout.scope.expression, key_expression, dialect)
        return JoinFanoutHypothesis(
            suspected=True, join_table=fanout.join_label, grain_key=grain_key, probe_sql=probe_sql
        )
    return JoinFanoutHypothesis.not_suspected()


def _figures(result) -> tuple[int, int] | None:
    if not result.rows or len(result.rows[0]) < 2:
        return None
    try:
        return int(result.rows[0][0]), int(result.rows[0][1])
    except (TypeError, ValueError):
        return None


@transaction.atomic
def check_fanout(
    *,
    hypothesis: JoinFanoutHypothesis,
    warehouse: Warehouse,
    subject_sql: str | None = None,
    subject_fingerprint: str = "",
) -> ProbeRun:
    """Probe a suspected fan-out of the subject SQL read-only and store the run; never confirm on a fault.

    The probe is Docket's own, written from the subject's FROM/JOIN tree, or the text the
    hypothesis brings if it has exactly that shape (`probes.fanout_probe.probe_plan`);
    anything else is refused and recorded as refused.
    """
    catalogue = catalogue_get_latest(warehouse_id=warehouse.pk)
    run = ProbeRun(
        warehouse=warehouse,
        kind="fanout",
        subject_fingerprint=subject_fingerprint,
        hypothesis=hypothesis.model_dump(),
        probe_sql=hypothesis.probe_sql or "",
        catalogue_version=catalogue.version if catalogue else None,
    )
    if not hypothesis.suspected:
        run.outcome, run.guard_allowed, run.message = ProbeOutcome.REFUTED, True, "no fan-out suspected; nothing probed"
        run.save()
        return run
    index = catalogue_index(catalogue if catalogue is not None else {"tables": {}})
    plan = probe_plan(hypothesis, subject_sql=subject_sql, index=index, dialect=warehouse.dialect)
    run.hypothesis["probe_written_by"] = plan.written_by
    if plan.refusal:
        run.outcome, run.guard_allowed = ProbeOutcome.REFUSED, not plan.guard_refused
        run.guard_reason = plan.refusal if plan.guard_refused else ""
        run.message = f"probe refused: {plan.refusal}"
        run.full_clean()
        run.save()
        return run
    run.probe_sql = plan.sql
    started = time.perf_counter()
    result = run_readonly(warehouse=warehouse, sql=plan.sql, row_cap=2)
    run.duration_ms = round((time.perf_counter() - started) * 1000, 3)
    run.guard_allowed = result.allowed
    run.guard_reason = result.reason or ""
    _record_counts(run, result, join_table=hypothesis.join_table, grain_key=hypothesis.grain_key or plan.grain)
    run.full_clean()
    run.save()
    return run


def _record_counts(run: ProbeRun, result, *, join_table, grain_key) -> None:
    """Set the run's outcome from what the warehouse counted (refused and error fail open)."""
    if not result.allowed:
        run.outcome, run.message = ProbeOutcome.REFUSED, f"probe refused: {result.reason}"
        return
    if not result.executed:
        run.outcome, run.message = ProbeOutcome.ERROR, f"probe failed: {result.error}"
        run.figures = {"error_code": result.error_code}
        return
    figures = _figures(result)
    if figures is None:
        run.outcome = ProbeOutcome.ERROR
        run.message = "probe failed: it must return COUNT(*) and COUNT(DISTINCT key) as its first two columns"
        return
    total, distinct = figures
    run.figures = {"total_rows": total, "distinct_keys": distinct}
    if total > distinct:
        run.outcome = ProbeOutcome.CONFIRMED
        run.message = f"{join_table} fans out {grain_key}: {total} rows for {distinct} distinct keys"
    else:
        run.outcome = ProbeOutcome.REFUTED
        run.message = f"no fan-out: {total} rows for {distinct} distinct keys"


def fanout_probe(*, sql: str, warehouse: Warehouse, subject_fingerprint: str = "") -> ProbeRun:
    """Detect fan-out in a SQL text against the latest catalogue and probe it (one call)."""
    catalogue = catalogue_get_latest(warehouse_id=warehouse.pk)
    if catalogue is None:
        hypothesis = JoinFanoutHypothesis.not_suspected()
    else:
        hypothesis = detect_fanout(sql, catalogue, dialect=warehouse.dialect)
    return check_fanout(
        hypothesis=hypothesis, warehouse=warehouse, subject_sql=sql, subject_fingerprint=subject_fingerprint
    )
