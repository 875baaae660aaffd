"""Mutation operators: sqlglot tree transforms that turn a correct query into a wrong one.

Each operator takes a parsed correct query and the warehouse's catalogue and returns
candidate variants, each tagged with the error class the change produces. An operator
only proposes: whether a variant is really wrong is decided by executing it against the
reference (`labelling.mutations`), never by the operator.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp

from labelling.models import ErrorClass

NUMBER_TYPES = ("int", "numeric", "decimal", "real", "float", "double", "money")
# Candidates per changed node: enough variety without flooding one item with near-copies.
CANDIDATES_PER_NODE = 2
FANOUT_ALIAS = "mut_fan"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool
    is_key: bool

    @property
    def is_number(self) -> bool:
        return any(word in self.type for word in NUMBER_TYPES)


@dataclass(frozen=True)
class ForeignKey:
    table: str
    column: str
    ref_table: str
    ref_column: str


@dataclass
class Schema:
    """What the operators read from a catalogue snapshot: columns, keys, one-column foreign keys."""

    tables: dict[str, dict[str, Column]]
    primary_keys: dict[str, str]
    foreign_keys: list[ForeignKey]

    @classmethod
    def from_snapshot(cls, snapshot: dict | None) -> "Schema":
        tables, primary_keys, foreign_keys = {}, {}, []
        for name, spec in ((snapshot or {}).get("tables") or {}).items():
            table = name.lower()
            keys = {c.lower() for c in spec.get("primary_key") or []}
            for fk in spec.get("foreign_keys") or []:
                if len(fk.get("columns") or []) == 1 and len(fk.get("ref_columns") or []) == 1:
                    keys.add(fk["columns"][0].lower())
                    foreign_keys.append(
                        ForeignKey(
                            table, fk["columns"][0].lower(), fk["ref_table"].lower(), fk["ref_columns"][0].lower()
                        )
                    )
            tables[table] = {
                c["name"].lower(): Column(
                    c["name"].lower(),
                    (c.get("type") or "").lower(),
                    bool(c.get("nullable")),
                    c["name"].lower() in keys or c["name"].lower().endswith("_id"),
                )
                for c in spec.get("columns") or []
            }
            if len(spec.get("primary_key") or []) == 1:
                primary_keys[table] = spec["primary_key"][0].lower()
        return cls(tables, primary_keys, foreign_keys)

    def column(self, table: str | None, name: str) -> Column | None:
        return (self.tables.get(table or "") or {}).get(name.lower())


@dataclass(frozen=True)
class Variant:
    sql: exp.Expression
    operator: str
    error_class: str


def from_clause(select: exp.Select) -> exp.From | None:
    """Return the FROM clause (sqlglot names the arg `from_` in recent versions, `from` before)."""
    return select.args.get("from_") or select.args.get("from")


def scope_tables(select: exp.Select) -> dict[str, str]:
    """Return {alias or name: table} of the base tables a SELECT reads directly (not subqueries)."""
    sources = [from_clause(select)] + list(select.args.get("joins") or [])
    found = {}
    for source in sources:
        table = source.this if source is not None else None
        if isinstance(table, exp.Table) and table.name:
            found[(table.alias or table.name).lower()] = table.name.lower()
    return found


def column_table(column: exp.Column, scope: dict[str, str], schema: Schema) -> str | None:
    """Return the base table a column reads, resolving unqualified names through the scope."""
    if column.table:
        return scope.get(column.table.lower())
    owners = [table for table in scope.values() if schema.column(table, column.name)]
    return owners[0] if len(owners) == 1 else None


def alias_of(scope: dict[str, str], table: str) -> str:
    return next(alias for alias, name in scope.items() if name == table)


def _selects(tree: exp.Expression) -> Iterator[tuple[int, exp.Select]]:
    yield from enumerate(tree.find_all(exp.Select))


def _nth_select(tree: exp.Expression, index: int) -> exp.Select:
    return next(select for i, select in _selects(tree) if i == index)


def _variant_of(tree: exp.Expression, index: int, change: Callable[[exp.Select], None]) -> exp.Expression:
    """Copy the tree and apply `change` to its index-th SELECT (positions survive a copy)."""
    copied = tree.copy()
    change(_nth_select(copied, index))
    return copied


def _path_in(select: exp.Select, node: exp.Expression) -> list:
    """Return the position of `node` among the SELECT's nodes, to find it again in a copy."""
    return [i for i, candidate in enumerate(select.walk()) if candidate is node]


def _node_at(select: exp.Select, position: int) -> exp.Expression:
    return next(node for i, node in enumerate(select.walk()) if i == position)


# --- the seven operators ------------------------------------------------------------------


def swap_measure(tree: exp.Expression, schema: Schema) -> Iterator[exp.Expression]:
    """Swap a measure inside SUM/AVG/MIN/MAX for a sibling number column (unit_price → list_price)."""
    for index, select in _selects(tree):
        scope = scope_tables(select)
        for aggregate in select.find_all(exp.Sum, exp.Avg, exp.Min, exp.Max):
            for column in aggregate.find_all(exp.Column):
                table = column_table(column, scope, schema)
                current = schema.column(table, column.name)
                if current is None or current.is_key or not current.is_number:
                    continue
                siblings = [
                    (alias, candidate.name)
                    for alias, scope_table in sorted(scope.items(), key=lambda item: item[1] != table)
                    for candidate in schema.tables.get(scope_table, {}).values()
                    if candidate.is_number
                    and not candidate.is_key
                    and (scope_table, candidate.name) != (table, current.name)
                ]
                position = _path_in(select, column)[0]
                for alias, name in siblings[:CANDIDATES_PER_NODE]:

                    def change(target, position=position, alias=alias, name=name):
                        _node_at(target, position).replace(exp.column(name, table=alias))

                    yield _variant_of(tree, index, change)


def drop_conjunct(tree: exp.Expression, schema: Schema) -> Iterator[exp.Expression]:
    """Drop one conjunct of a WHERE clause (a status filter, a date bound)."""
    for index, select in _selects(tree):
        where = select.args.get("where")
        if where is None:
            continue
        conjuncts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
        for dropped in range(len(conjuncts)):

            def change(target, dropped=dropped):
                condition = target.args["where"].this
                parts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
                kept = [part.copy() for i, part in enumerate(parts) if i != dropped]
                target.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)

            yield _variant_of(tree, index, change)


def left_to_inner(tree: exp.Expression, schema: Schema) -> Iterator[exp.Expression]:
    """Turn a LEFT JOIN into an INNER JOIN (on a nullable key it drops the rows without a match)."""
    for index, select in _selects(tree):
        for position, join in enumerate(select.args.get("joins") or []):
            if (join.side or "").upper() != "LEFT":
                continue

            def change(target, position=position):
                target.args["joins"][position].set("side", None)

            yield _variant_of(tree, index, change)


def add_fanout_join(tree: exp.Expression, schema: Schema) -> Iterator[exp.Expression]:
    """Join a one-to-many child table before an aggregate, so the aggregate counts repeats."""
    for index, select in _selects(tree):
        if not select.find(exp.Sum, exp.Avg, exp.Count) or from_clause(select) is None:
            continue
        scope = scope_tables(select)
        children = [
            (alias, fk)
            for alias, table in scope.items()
            for fk in schema.foreign_keys
            if fk.ref_table == table and schema.primary_keys.get(table) == fk.ref_column and fk.table != table
        ]
        for alias, fk in children[: CANDIDATES_PER_NODE + 1]:

            def change(target, alias=alias, fk=fk):
                condition = exp.column(fk.column, table=FANOUT_ALIAS).eq(exp.column(fk.ref_column, table=alias))
                target.join(exp.to_table(fk.table).as_(FANOUT_ALIAS), on=condition, copy=False)

            yield _variant_of(tree, index, change)


def change_grain(tree: exp.Expression, schema: Schema) -> Iterator[exp.Expression]:
    """Group by one more (text) column than the question asks for, so each group splits."""
    for index, select in _selects(tree):
        has_aggregate = select.find(exp.AggFunc) is not None
        if not has_aggregate:
            continue
        grouped = {node.sql().lower() for node in (select.args.get("group") or exp.Group()).expressions}
        scope = scope_tables(select)
        extra = [
            exp.column(column.name, table=alias)
            for alias, table in scope.items()
            for column in schema.tables.get(table, {}).values()
            if not column.is_key and not column.is_number and "date" not in column.type
        ]
        # Coarse columns first (status, category): a name or an email splits every group apart.
        extra = sorted(
            (column for column in extra if column.sql().lower() not in grouped),
            key=lambda column: any(word in column.name for word in ("name", "email")),
        )
        for column in extra[:CANDIDATES_PER_NODE]:

            def change(target, column=column):
                group = target.args.get("group")
                if group is None:
                    target.set("group", exp.Group(expressions=[column.copy()]))
                else:
                    group.append("expressions", column.copy())

            yield _variant_of(tree, index, change)


def count_distinct(tree: exp.Expression, schema: Schema) -> Iterator[exp.Expression]:
    """COUNT(DISTINCT x) → COUNT(x): count rows instead of distinct things."""
    for index, select in _selects(tree):
        for count in select.find_all(exp.Count):
            if not isinstance(count.this, exp.Distinct) or len(count.this.expressions) != 1:
                continue
            position = _path_in(select, count)[0]

            def change(target, position=position):
                node = _node_at(target, position)
                node.replace(exp.Count(this=node.this.expressions[0].copy()))

            yield _variant_of(tree, index, change)


def swap_join_key(tree: exp.Expression, schema: Schema) -> Iterator[exp.Expression]:
    """Join on another key column of the same table (o.customer_id → o.order_id)."""
    for index, select in _selects(tree):
        scope = scope_tables(select)
        for join in select.args.get("joins") or []:
            condition = join.args.get("on")
            if not isinstance(condition, exp.EQ):
                continue
            for column in (condition.this, condition.expression):
                if not isinstance(column, exp.Column):
                    continue
                table = column_table(column, scope, schema)
                current = schema.column(table, column.name)
                if current is None:
                    continue
                others = [
                    c.name
                    for c in schema.tables.get(table, {}).values()
                    if c.is_key and c.name != current.name and c.is_number == current.is_number
                ]
                position = _path_in(select, column)[0]
                alias = column.table or alias_of(scope, table)
                for name in others[:CANDIDATES_PER_NODE]:

                    def change(target, position=position, alias=alias, name=name):
                        _node_at(target, position).replace(exp.column(name, table=alias))

                    yield _variant_of(tree, index, change)


# Operator name → (transform, the error class its variants carry). Classes are the demo's.
OPERATORS: dict[str, tuple[Callable[[exp.Expression, Schema], Iterator[exp.Expression]], str]] = {
    "swap_measure": (swap_measure, ErrorClass.WRONG_MEASURE.value),
    "drop_conjunct": (drop_conjunct, ErrorClass.MISSING_FILTER.value),
    "left_to_inner": (left_to_inner, ErrorClass.DROPPED_ROWS.value),
    "add_fanout_join": (add_fanout_join, ErrorClass.JOIN_FANOUT.value),
    "change_grain": (change_grain, ErrorClass.AGGREGATION_GRAIN.value),
    # Counting rows where the question counts distinct things answers at the wrong grain.
    "count_distinct": (count_distinct, ErrorClass.AGGREGATION_GRAIN.value),
    # A join on the wrong key runs and returns plausible rows that answer another question.
    "swap_join_key": (swap_join_key, ErrorClass.MISREAD_INTENT.value),
}


def operators_for(classes=None) -> list[str]:
    """Return the operator names whose class is in `classes` (all of them when None)."""
    wanted = set(classes) if classes else None
    return [name for name, (_, error_class) in OPERATORS.items() if wanted is None or error_class in wanted]


def variants_of(tree: exp.Expression, schema: Schema, operators: list[str], start: int = 0) -> Iterator[Variant]:
    """Yield the candidate variants of a correct query, one operator at a time (round robin).

    `start` rotates which operator goes first, so that a small per-item quota spreads
    over every operator across items instead of always taking the first ones.
    """
    shift = start % len(operators) if operators else 0
    streams = [(name, OPERATORS[name][0](tree, schema)) for name in operators[shift:] + operators[:shift]]
    while streams:
        still = []
        for name, stream in streams:
            variant = next(stream, None)
            if variant is not None:
                yield Variant(variant, name, OPERATORS[name][1])
                still.append((name, stream))
        streams = still
