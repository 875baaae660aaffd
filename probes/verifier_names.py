"""The verifier's name checks: every table and column the SQL reads resolved against the catalogue.

A miss is an `unknown_object` finding with a "did you mean" drawn from the catalogue;
names sqlglot's scoping cannot follow are left to the database's EXPLAIN.
"""

import difflib

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from probes.catalogue_index import CatalogueIndex, did_you_mean
from probes.verifier_result import Finding

PSEUDO_COLUMNS = {"rowid", "oid", "_rowid_", "ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"}


def _scope_outputs(scope: Scope) -> set[str] | None:
    """Return the lower-case column names a derived table or CTE exposes; None if unknown."""
    expression = scope.expression
    if isinstance(expression, exp.SetOperation):
        expression = expression.left
        while isinstance(expression, exp.SetOperation):
            expression = expression.left
    if isinstance(expression, exp.Subquery):
        expression = expression.unnest()
    if not isinstance(expression, exp.Select):
        return None
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star) for e in expression.expressions):
        return None
    return {name.lower() for name in expression.named_selects}


def _declared_columns(source) -> set[str] | None:
    """Columns declared in `AS alias(a, b)` (or `WITH name(a, b)`) for this source, if any."""
    if isinstance(source, exp.Table):
        node = source
    elif isinstance(source, Scope):
        node = source.expression.parent
    else:
        return None
    alias = node.args.get("alias") if node is not None else None
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return {c.name.lower() for c in alias.columns}
    return None


def _source_columns(scope: Scope, alias: str, source, index: CatalogueIndex):
    """Return (label, set of columns or None if unknowable, TableInfo or None)."""
    declared = _declared_columns(source)
    if declared is not None:
        return alias, declared, None
    if isinstance(source, exp.Table):
        info = index.table(source)
        if info is None:
            return source.name, None, None
        return info.name, set(info.columns), info
    if isinstance(source, Scope):
        return alias, _scope_outputs(source), None
    return alias, None, None


def _select_aliases(scope: Scope) -> set[str]:
    expression = scope.expression
    if isinstance(expression, exp.SetOperation):
        left = expression.left
        while isinstance(left, exp.SetOperation):
            left = left.left
        expression = left
    if isinstance(expression, exp.Select):
        return {e.alias.lower() for e in expression.expressions if isinstance(e, exp.Alias)}
    return set()


def _ancestry(scope: Scope):
    while scope is not None:
        yield scope
        scope = scope.parent


def check_table_names(scopes, index: CatalogueIndex, findings: list[Finding]) -> None:
    seen = set()
    for scope in scopes:
        for source in scope.sources.values():
            if not isinstance(source, exp.Table) or isinstance(source.this, exp.Func):
                continue
            if not source.name or index.table(source) is not None:
                continue
            label = f"{source.db}.{source.name}" if source.db else source.name
            if label.lower() in seen:
                continue
            seen.add(label.lower())
            suggestion = did_you_mean(label, index.table_names())
            message = f"unknown table {label}" + (f"; did you mean {suggestion}?" if suggestion else "")
            findings.append(Finding("unknown_table", "unknown_object", message))


def check_columns(scopes, index: CatalogueIndex, findings: list[Finding]) -> None:
    reported = set()

    def report(message):
        if message not in reported:
            reported.add(message)
            findings.append(Finding("unknown_column", "unknown_object", message))

    for scope in scopes:
        for column in scope.columns:
            if isinstance(scope.expression, exp.Select) and column.find_ancestor(exp.Select) is not scope.expression:
                continue  # a child scope's column, listed here in case it is correlated
            name = column.name
            lowered = name.lower()
            if not name or lowered in PSEUDO_COLUMNS or isinstance(column.this, exp.Star):
                continue
            if column.table:
                _check_qualified(scope, column, index, report)
            else:
                _check_unqualified(scope, column, index, report)


def _check_qualified(scope, column, index, report):
    alias = column.table
    for ancestor in _ancestry(scope):
        source = ancestor.sources.get(alias) or ancestor.sources.get(alias.lower())
        if source is None:
            matches = [s for key, s in ancestor.sources.items() if key.lower() == alias.lower()]
            source = matches[0] if matches else None
        if source is None:
            continue
        label, columns, info = _source_columns(ancestor, alias, source, index)
        if columns is None or column.name.lower() in columns:
            return
        candidates = list(info.columns.values()) if info else sorted(columns)
        suggestion = did_you_mean(column.name, candidates)
        if suggestion:
            report(f"unknown column {label}.{column.name}; did you mean {label}.{suggestion}?")
        else:
            report(f"unknown column {label}.{column.name}; {label} has columns {', '.join(candidates[:12])}")
        return
    if column.db or alias.lower() in index.tables:
        return  # a schema-qualified reference to a table not in FROM: leave it to EXPLAIN
    report(f"unknown table or alias {alias} in {alias}.{column.name}")


def _check_unqualified(scope, column, index, report):
    lowered = column.name.lower()
    candidates: list[str] = []
    for depth, ancestor in enumerate(_ancestry(scope)):
        if depth == 0 and lowered in _select_aliases(ancestor):
            return
        for alias, source in ancestor.sources.items():
            label, columns, info = _source_columns(ancestor, alias, source, index)
            if columns is None or lowered in columns:
                return
            names = list(info.columns.values()) if info else sorted(columns)
            candidates.extend(f"{label}.{name}" for name in names)
        if not ancestor.sources and depth == 0 and not isinstance(ancestor.expression, exp.Select):
            return
    if not candidates:
        return  # no catalogue source to check against (e.g. SELECT without FROM)
    by_column = {c.split(".")[-1].lower(): c for c in candidates}
    match = difflib.get_close_matches(lowered, list(by_column), n=1, cutoff=0.5)
    if match:
        report(f"unknown column {column.name}; did you mean {by_column[match[0]]}?")
    else:
        report(f"unknown column {column.name}")
