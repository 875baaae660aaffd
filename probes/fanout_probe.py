"""Fan-out probes Docket writes itself, and the one shape a probe handed in must have (seed 003).

A fan-out suspicion names a join table and a grain key (`probes.hypotheses`). Docket writes
the probe from the subject SQL's own tree (`probe_plan` → `_write`): the FROM/JOIN/WHERE of
the SELECT that joins that table, with `COUNT(*)` against `COUNT(DISTINCT <grain key>)`, as
the detector does (`probes.fanout.detect_fanout`, through `probe_text`). A probe text that
comes with the suspicion (a model's `probe_sql`, or the detector's own) runs only if it is
exactly that shape over one of the subject's SELECTs (`_check_given`); anything else is
refused, so `SELECT 2, 1` can never confirm. Why each condition:

- the FROM/JOIN/WHERE must be the subject's own: another join or filter could repeat or
  drop rows the subject never reads;
- the DISTINCT must count a unique key of one table of that FROM/JOIN (by the catalogue; a
  table with no key known counts its row id): `COUNT(DISTINCT status)` is below `COUNT(*)`
  on almost any table;
- that table must not be on the null-extended side of an outer join: `COUNT(*)` counts
  the rows where it is missing, `COUNT(DISTINCT)` does not.
"""

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from probes.catalogue_index import CatalogueIndex, TableInfo
from probes.fingerprint import sqlglot_dialect
from probes.guard import parse_sql
from probes.hypotheses import JoinFanoutHypothesis

# The clauses a probe may have; any other (GROUP BY, LIMIT, DISTINCT, ...) changes what it counts.
PROBE_CLAUSES = {"expressions", "from_", "joins", "where", "with_"}
PSEUDO_KEYS = {"postgres": "ctid", "sqlite": "rowid", "duckdb": "rowid"}


@dataclass(frozen=True)
class ProbePlan:
    """What to run for a suspicion: a probe text, or why nothing runs."""

    sql: str = ""
    refusal: str = ""
    guard_refused: bool = False  # the guard itself refused the text handed in
    written_by: str = ""  # "docket" (written from the subject) or "given" (handed in, shape checked)
    grain: str = ""  # the grain key counted, readable

    @classmethod
    def refused(cls, reason: str, written_by: str, *, guard: bool = False) -> "ProbePlan":
        return cls(refusal=reason, guard_refused=guard, written_by=written_by)


def probe_plan(
    hypothesis: JoinFanoutHypothesis, *, subject_sql: str | None, index: CatalogueIndex, dialect: str
) -> ProbePlan:
    """Decide what runs for a suspected fan-out: Docket's own probe, the checked given one, or nothing."""
    written_by = "given" if hypothesis.probe_sql else "docket"
    if hypothesis.probe_sql:
        guarded = parse_sql(hypothesis.probe_sql, dialect)
        if not guarded.verdict.allowed:
            return ProbePlan.refused(guarded.verdict.reason or "refused by the guard", written_by, guard=True)
    if not subject_sql:
        return ProbePlan.refused("there is no subject SQL to build or check the probe against", written_by)
    tree = parse_sql(subject_sql, dialect).tree
    try:
        scopes = traverse_scope(tree) if tree is not None else []
    except (SqlglotError, RecursionError, KeyError, ValueError):
        scopes = []
    if not scopes:
        return ProbePlan.refused("the subject SQL could not be read, so no probe can be built over it", written_by)
    if hypothesis.probe_sql:
        return _check_given(parse_sql(hypothesis.probe_sql, dialect).tree, tree, scopes, index, dialect)
    return _write(hypothesis, tree, scopes, index, dialect)


# --- writing -----------------------------------------------------------------------------------


def grain_key_expression(alias: str, info: TableInfo, key: list[str] | None, dialect: str):
    """Return (expression to COUNT DISTINCT, readable name) for a key of the grain table.

    `key` None counts the table's row id (`ctid` / `rowid`): the table has no key known.
    """
    if not key:
        pseudo = PSEUDO_KEYS.get(dialect, "rowid")
        return exp.column(pseudo, table=alias), f"{info.name}.{pseudo}"
    if len(key) == 1:
        return exp.column(key[0], table=alias), f"{info.name}.{key[0]}"
    columns = [exp.column(k, table=alias) for k in key]
    readable = f"{info.name}.({', '.join(key)})"
    if dialect == "postgres":
        return exp.Tuple(expressions=columns), readable
    if dialect == "mysql":  # `||` is OR there
        parts = [exp.cast(columns[0], "CHAR")]
        for column in columns[1:]:
            parts += [exp.Literal.string("|"), column]
        return exp.Concat(expressions=parts), readable
    expression = exp.cast(columns[0], "TEXT")
    for column in columns[1:]:
        expression = exp.DPipe(this=exp.DPipe(this=expression, expression=exp.Literal.string("|")), expression=column)
    return expression, readable


def probe_text(tree: exp.Expression, select: exp.Select, key_expression: exp.Expression, dialect: str) -> str:
    """Write the probe: the SELECT's own FROM/JOIN/WHERE, COUNT(*) against COUNT(DISTINCT key)."""
    probe = select.copy()
    for arg in list(probe.args):
        if arg not in PROBE_CLAUSES:
            probe.set(arg, None)
    probe.set(
        "expressions",
        [
            exp.alias_(exp.Count(this=exp.Star()), "total_rows"),
            exp.alias_(exp.Count(this=exp.Distinct(expressions=[key_expression])), "distinct_keys"),
        ],
    )
    if probe.args.get("with_") is None and tree.args.get("with_") is not None and select is not tree:
        probe.set("with_", tree.args["with_"].copy())
    return probe.sql(dialect=sqlglot_dialect(dialect), comments=False)


def _write(hypothesis, tree, scopes, index: CatalogueIndex, dialect: str) -> ProbePlan:
    join_table = (hypothesis.join_table or "").strip().lower()
    if not join_table:
        return ProbePlan.refused("the suspicion names no join table", "docket")
    for scope in reversed(scopes):  # the outermost SELECT first, as the detector looks
        select = scope.expression
        if not isinstance(select, exp.Select) or not select.args.get("joins"):
            continue
        if not any(join_table in (alias.lower(), table.name.lower()) for alias, table in _tables(scope).items()):
            continue
        grain = _named_grain(hypothesis.grain_key or "", scope, index)
        if isinstance(grain, str):
            return ProbePlan.refused(grain, "docket")
        alias, info, key = grain
        if _null_extended(select, alias):
            return ProbePlan.refused(_null_extended_reason(info), "docket")
        key_expression, readable = grain_key_expression(alias, info, key, dialect)
        return ProbePlan(sql=probe_text(tree, select, key_expression, dialect), written_by="docket", grain=readable)
    return ProbePlan.refused(f"the subject SQL joins no table {hypothesis.join_table!r}", "docket")


def _named_grain(text: str, scope: Scope, index: CatalogueIndex):
    """Resolve a grain key as the model names it ("oi.item_id", "order_items.item_id", "item_id",
    "orders.(a, b)"); return (alias, table info, key columns or None for the row id) or why not."""
    text = text.strip()
    if "(" in text:
        qualifier, _, inside = text.partition("(")
        names = [part.strip() for part in inside.rstrip(") ").split(",") if part.strip()]
        qualifier = qualifier.strip().rstrip(".")
    else:
        qualifier, _, name = text.rpartition(".")
        names = [name.strip()] if name.strip() else []
    if not names:
        return "the suspicion names no grain key"
    qualifier = qualifier.rpartition(".")[2].strip().lower()  # drop a schema
    alias = _owner(qualifier, [n.lower() for n in names], scope, index)
    if alias is None or alias.startswith("?"):
        return alias[1:] if alias else f"the grain key {text!r} names no table of the subject's FROM/JOIN"
    info = index.table(_tables(scope)[alias])
    missing = [n for n in names if n.lower() not in info.columns]
    if missing:
        return f"{info.name} has no column {missing[0]}"
    if not info.keys:
        return alias, info, None
    if not any(key <= {n.lower() for n in names} for key in info.keys):
        keys = "; ".join(", ".join(sorted(key)) for key in info.keys)
        return (
            f"{text} is not a unique key of {info.name} (its keys: {keys}); a count of its distinct values "
            "says nothing about repeated rows"
        )
    return alias, info, names


# --- checking a probe handed in --------------------------------------------------------------


def _check_given(probe, tree, scopes, index: CatalogueIndex, dialect: str) -> ProbePlan:
    problem = _shape_problem(probe)
    if problem:
        return ProbePlan.refused(f"not a fan-out probe: {problem}", "given")
    scope = next((s for s in scopes if _same_body(s.expression, probe, dialect)), None)
    if scope is None:
        return ProbePlan.refused("its FROM/JOIN/WHERE is not that of any SELECT of the subject SQL", "given")
    probe_with, subject_with = probe.args.get("with_"), tree.args.get("with_")
    if probe_with is not None and (subject_with is None or _text(probe_with, dialect) != _text(subject_with, dialect)):
        return ProbePlan.refused("its WITH clause is not the subject SQL's", "given")
    if scope.cte_sources and probe_with is None:
        return ProbePlan.refused("it reads the subject's CTEs without the subject's WITH clause", "given")
    counted = probe.expressions[1].unalias().this.expressions[0]
    grain = _counted_grain(counted, scope, index, dialect)
    if isinstance(grain, str):
        return ProbePlan.refused(grain, "given")
    alias, info, readable = grain
    if _null_extended(scope.expression, alias):
        return ProbePlan.refused(_null_extended_reason(info), "given")
    # What runs is the text as read and checked, comments dropped.
    return ProbePlan(sql=_text(probe, dialect), written_by="given", grain=readable)


def _shape_problem(probe) -> str | None:
    if not isinstance(probe, exp.Select):
        return "a probe is one SELECT of COUNT(*) and COUNT(DISTINCT key)"
    extra = sorted(arg for arg, value in probe.args.items() if value and arg not in PROBE_CLAUSES)
    if extra:
        return f"a probe has no {extra[0].rstrip('_').upper()} clause"
    if not probe.args.get("from_"):
        return "a probe reads the subject's FROM"
    if len(probe.expressions) != 2:
        return f"a probe returns exactly COUNT(*) and COUNT(DISTINCT key), not {len(probe.expressions)} columns"
    first, second = (projection.unalias() for projection in probe.expressions)
    if not (isinstance(first, exp.Count) and isinstance(first.this, exp.Star)):
        return "its first column must be COUNT(*)"
    if not (
        isinstance(second, exp.Count) and isinstance(second.this, exp.Distinct) and len(second.this.expressions) == 1
    ):
        return "its second column must be COUNT(DISTINCT key)"
    return None


def _counted_grain(counted, scope: Scope, index: CatalogueIndex, dialect: str):
    """Return (alias, table info, readable key) of the key a probe's DISTINCT counts, or why it is no key."""
    columns = _key_columns(counted)
    if columns is None:
        return "COUNT(DISTINCT ...) must name the columns of a key (or a tuple of them), nothing computed"
    names = [column.name.lower() for column in columns]
    owners = {_owner(column.table.lower(), [column.name.lower()], scope, index) for column in columns}
    if len(owners) != 1 or None in owners or any(o.startswith("?") for o in owners):
        return "COUNT(DISTINCT ...) must count the key of one table of the subject's FROM/JOIN"
    alias = owners.pop()
    info = index.table(_tables(scope)[alias])
    if names == [PSEUDO_KEYS.get(dialect, "rowid")] and columns[0].table:
        return alias, info, f"{info.name}.{names[0]}"
    if not any(key <= set(names) for key in info.keys):
        return f"{', '.join(names)} is not a unique key of {info.name}, so its distinct count says nothing"
    readable = names[0] if len(names) == 1 else f"({', '.join(names)})"
    return alias, info, f"{info.name}.{readable}"


def _key_columns(expression) -> list[exp.Column] | None:
    """The columns a DISTINCT key is made of: a column, a tuple of columns, or `a || '|' || b`."""
    if isinstance(expression, exp.Paren):
        return _key_columns(expression.this)
    if isinstance(expression, exp.Column):
        return [expression]
    if isinstance(expression, exp.Tuple):
        parts = expression.expressions
        return parts if parts and all(isinstance(part, exp.Column) for part in parts) else None
    if isinstance(expression, exp.DPipe):
        leaves = _concatenated(expression)
        columns = [leaf.this if isinstance(leaf, exp.Cast) else leaf for leaf in leaves[::2]]
        separators = leaves[1::2]
        if all(isinstance(c, exp.Column) for c in columns) and all(
            isinstance(s, exp.Literal) and s.is_string and s.this == "|" for s in separators
        ):
            return columns
    return None


def _concatenated(expression) -> list:
    if isinstance(expression, exp.DPipe):
        return _concatenated(expression.this) + _concatenated(expression.expression)
    return [expression]


# --- shared --------------------------------------------------------------------------------------


def _tables(scope: Scope) -> dict[str, exp.Table]:
    return {alias: source for alias, source in scope.sources.items() if isinstance(source, exp.Table)}


def _owner(qualifier: str, names: list[str], scope: Scope, index: CatalogueIndex) -> str | None:
    """Return the alias of the catalogued table that qualifier (alias or table name) and columns
    point at; None when none does, "?<why>" when it is ambiguous."""
    tables = {alias: table for alias, table in _tables(scope).items() if index.table(table) is not None}
    if qualifier:
        by_alias = [alias for alias in tables if alias.lower() == qualifier]
        by_name = [alias for alias, table in tables.items() if table.name.lower() == qualifier]
        found = by_alias or by_name
    else:
        found = [alias for alias, table in tables.items() if set(names) <= set(index.table(table).columns)]
    if len(found) > 1:
        return f"?{qualifier or names[0]} could be any of {', '.join(sorted(found))} in the subject's FROM/JOIN"
    return found[0] if found else None


def _null_extended(select: exp.Select, alias: str) -> bool:
    """True when an outer join can make the alias's columns NULL (its rows missing) in this SELECT."""
    source = select.args.get("from_")
    seen = [source.this.alias_or_name.lower()] if source is not None else []
    alias = alias.lower()
    for join in select.args.get("joins") or []:
        side, joined = (join.side or "").upper(), join.alias_or_name.lower()
        if side in ("LEFT", "FULL") and joined == alias:
            return True
        if side in ("RIGHT", "FULL") and alias in seen:
            return True
        seen.append(joined)
    return False


def _null_extended_reason(info: TableInfo) -> str:
    return (
        f"{info.name} is on the outer side of an outer join: COUNT(*) would count the rows where it is missing "
        "and COUNT(DISTINCT) would not"
    )


def _same_body(select, probe: exp.Select, dialect: str) -> bool:
    """True when the SELECT reads exactly the probe's FROM, JOINs and WHERE."""
    if not isinstance(select, exp.Select):
        return False
    return _body(select, dialect) == _body(probe, dialect)


def _body(select: exp.Select, dialect: str) -> tuple:
    where = select.args.get("where")
    return (
        _text(select.args.get("from_"), dialect),
        tuple(_text(join, dialect) for join in select.args.get("joins") or []),
        _text(where, dialect) if where is not None else "",
    )


def _text(node, dialect: str) -> str:
    return node.sql(dialect=sqlglot_dialect(dialect), comments=False) if node is not None else ""
