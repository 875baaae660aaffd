"""A recursive CTE must provably stop, and must not grow its rows as it goes.

A recursive CTE is allowed when the guard can see one of three bounds (issue 27):

1. a literal `LIMIT` (plus a literal `OFFSET`) on the CTE itself, at most
   `WAREHOUSE_MAX_RECURSIVE_ROWS`, with no ORDER BY beside it (which would need every row);
2. a counter the recursion provably runs out of: the recursive step reads only the CTE, adds a
   positive literal step to one of its columns (`n + 1`, `d + INTERVAL '1 day'`, SQLite's
   `date(d, '+1 day')`), and its WHERE holds that column under a literal (`n < 100`,
   `d < DATE '2024-12-31'`), starting from a literal — within `WAREHOUSE_MAX_RECURSIVE_ROWS`
   steps;
3. the row cap: the CTE is read only by a plain stream (the query reading it has no WHERE,
   join, aggregate, window, DISTINCT, GROUP BY or ORDER BY, and so does any query around
   it), so every row it makes goes to Docket, which stops reading at the row cap and so
   stops the recursion.

And in every case the recursive step may not build a value from its own columns faster than
by adding to it once (`s || s`, `replace(s, 'x', s)`, `repeat(s, 2)` double it each step).
"""

import math
import re
from datetime import datetime

from sqlglot import exp

from probes.guard_limits import GuardLimits

_GROWTH_CALLS = (exp.Repeat, exp.Replace, exp.RegexpReplace, exp.Format)
_CONCATENATION = (exp.DPipe, exp.Concat, exp.ConcatWs)
_DAYS_PER_UNIT = {
    "microsecond": 1 / 86_400_000_000,
    "millisecond": 1 / 86_400_000,
    "second": 1 / 86_400,
    "minute": 1 / 1440,
    "hour": 1 / 24,
    "day": 1,
    "week": 7,
    "month": 28,
    "year": 365,
}
_MODIFIER = re.compile(r"^\s*\+\s*(\d+(?:\.\d+)?)\s+([a-z]+?)s?\s*$", re.IGNORECASE)


def _references(node: exp.Expression, alias: str) -> list[exp.Table]:
    return [t for t in node.find_all(exp.Table) if t.name.lower() == alias and not t.db]


def _literal_number(node: exp.Expression | None) -> int | None:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        return int(node.name)
    return None


def literal_rows(query: exp.Expression | None) -> tuple[int | None, str | None]:
    """(LIMIT + OFFSET of a query when both are literal, or why not); (None, None) without a LIMIT."""
    if query is None:
        return None, None
    limit = query.args.get("limit")
    if isinstance(limit, exp.Limit):
        value = _literal_number(limit.expression)
    elif isinstance(limit, exp.Fetch):
        value = _literal_number(limit.args.get("count"))
    else:
        return None, None
    offset = query.args.get("offset")
    skipped = 0 if offset is None else _literal_number(offset.expression if isinstance(offset, exp.Offset) else offset)
    if value is None or skipped is None:
        return None, "its LIMIT and OFFSET must be literal numbers (within WAREHOUSE_MAX_RECURSIVE_ROWS)"
    return value + skipped, None


def _parts(body: exp.Expression, alias: str) -> tuple[list[exp.Select], list[exp.Select]]:
    """(anchor selects, recursive selects) of a recursive CTE's body."""
    selects, stack = [], [body]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.SetOperation):
            stack += [node.expression, node.this]
        elif isinstance(node, exp.Subquery):
            stack.append(node.this)
        else:
            selects.append(node)
    anchors = [s for s in selects if not _references(s, alias)]
    return anchors, [s for s in selects if _references(s, alias)]


def _columns(cte: exp.CTE, anchors: list[exp.Select]) -> list[str]:
    alias = cte.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return [column.name.lower() for column in alias.columns]
    first = anchors[0] if anchors and isinstance(anchors[0], exp.Select) else None
    return [p.alias_or_name.lower() for p in first.expressions] if first else []


def _own_columns(expression: exp.Expression, columns: list[str], names: set[str]) -> list[exp.Column]:
    """References to the CTE's own columns (bare, or through the CTE's name or alias in the step)."""
    return [
        c
        for c in expression.find_all(exp.Column)
        if c.name.lower() in columns and (not c.table or c.table.lower() in names)
    ]


def _growth_refusal(step: exp.Select, columns: list[str], alias: str, name: str) -> str | None:
    names = {alias} | {t.alias_or_name.lower() for t in _references(step, alias)}
    for projection in step.expressions:
        own = _own_columns(projection, columns, names)
        for column in own:
            grown = column.find_ancestor(*_GROWTH_CALLS)
            if grown is not None:
                call = grown.sql_name().lower()
                return f"recursive CTE {name} grows {column.name} with {call}() (past WAREHOUSE_MAX_SQL_WIDTH)"
        concatenated = [c for c in own if c.find_ancestor(*_CONCATENATION) is not None]
        if len(concatenated) > 1:
            return (
                f"recursive CTE {name} doubles its own {concatenated[0].name} each step (past WAREHOUSE_MAX_SQL_WIDTH)"
            )
    return None


# --- 2. a counter the recursion runs out of --------------------------------------------------


def _point(node: exp.Expression | None) -> float | None:
    """A literal number, date or timestamp as a number (dates in days); None if not a literal."""
    while isinstance(node, exp.Paren | exp.Alias):
        node = node.this
    if isinstance(node, exp.Neg):
        inner = _point(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Cast):
        node = node.this
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("date", "datetime") and len(node.expressions) == 1:
        node = node.expressions[0]
    if not isinstance(node, exp.Literal):
        return None
    if not node.is_string:
        try:
            return float(node.name)
        except ValueError:
            return None
    try:
        moment = datetime.fromisoformat(node.name.strip())
    except ValueError:
        return None
    return (moment - datetime(1970, 1, 1, tzinfo=moment.tzinfo)).total_seconds() / 86_400


def _step(expression: exp.Expression, column: str) -> float | None:
    """The signed step of `column + k` / `column - k` / `date(column, '+N unit')`; None if not one."""
    if isinstance(expression, exp.Alias | exp.Paren):
        return _step(expression.this, column)
    if isinstance(expression, exp.Add | exp.Sub) and _is_column(expression.this, column):
        amount = _amount(expression.expression)
        if amount is not None and amount > 0:
            return amount if isinstance(expression, exp.Add) else -amount
    if isinstance(expression, exp.Anonymous) and expression.name.lower() in ("date", "datetime"):
        arguments = expression.expressions
        if len(arguments) == 2 and _is_column(arguments[0], column) and isinstance(arguments[1], exp.Literal):
            match = _MODIFIER.match(arguments[1].name)
            if match and match.group(2).lower() in _DAYS_PER_UNIT:
                return float(match.group(1)) * _DAYS_PER_UNIT[match.group(2).lower()]
    return None


def _is_column(node: exp.Expression, column: str) -> bool:
    while isinstance(node, exp.Paren | exp.Cast):
        node = node.this
    return isinstance(node, exp.Column) and node.name.lower() == column


def _amount(node: exp.Expression) -> float | None:
    """A positive literal number, or an interval literal in days."""
    if isinstance(node, exp.Interval):
        unit = (node.unit.name if node.unit else "").lower().rstrip("s")
        text = node.this.name if isinstance(node.this, exp.Literal) else ""
        parts = text.split()
        if len(parts) == 2 and not unit:
            text, unit = parts[0], parts[1].lower().rstrip("s")
        try:
            count = float(text)
        except ValueError:
            return None
        return count * _DAYS_PER_UNIT[unit] if unit in _DAYS_PER_UNIT else None
    value = _point(node)
    return value if value is not None and not isinstance(node, exp.Cast) else None


def _bounds(where: exp.Expression | None, column: str) -> list[tuple[str, float]]:
    """(direction, literal) of each conjunct holding `column` under or over a literal."""
    found, stack = [], [where.this] if where is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, exp.And):
            stack += [node.this, node.expression]
            continue
        if isinstance(node, exp.Paren):
            stack.append(node.this)
            continue
        for kind, upper in ((exp.LT, True), (exp.LTE, True), (exp.GT, False), (exp.GTE, False)):
            if isinstance(node, kind):
                if _is_column(node.this, column) and _point(node.expression) is not None:
                    found.append(("below" if upper else "above", _point(node.expression)))
                elif _is_column(node.expression, column) and _point(node.this) is not None:
                    found.append(("above" if upper else "below", _point(node.this)))
    return found


def counter_steps(anchors: list[exp.Select], step: exp.Select, columns: list[str], alias: str) -> float | None:
    """How many rows the recursion provably makes per anchor row, or None if it cannot tell."""
    sources = [step.args.get("from_") and step.args["from_"].this, *[j.this for j in step.args.get("joins") or []]]
    if len(sources) != 1 or not isinstance(sources[0], exp.Table) or sources[0].name.lower() != alias:
        return None  # the step reads more than the CTE: each row may fan out
    best = None
    for index, column in enumerate(columns):
        if index >= len(step.expressions):
            break
        increment = _step(step.expressions[index], column)
        starts = [_point(a.expressions[index]) if index < len(a.expressions) else None for a in anchors]
        if increment is None or not starts or None in starts:
            continue
        for direction, limit in _bounds(step.args.get("where"), column):
            if (direction == "below") != (increment > 0):
                continue
            distance = max((limit - start) if increment > 0 else (start - limit) for start in starts)
            steps = math.floor(max(distance, 0) / abs(increment)) + 2
            best = steps if best is None else min(best, steps)
    return best


# --- 3. read only as a stream ------------------------------------------------------------------


def is_stream(select: exp.Expression) -> bool:
    """A SELECT that hands every row of its one source on, unfiltered and in its own order."""
    if not isinstance(select, exp.Select):
        return False
    if any(select.args.get(key) for key in ("where", "group", "having", "order", "distinct", "joins", "qualify")):
        return False
    if any(isinstance(n, exp.AggFunc | exp.Window) for p in select.expressions for n in p.walk()):
        return False
    return select.args.get("from_") is not None


def _read_as_stream(with_: exp.With, alias: str) -> bool:
    owner = with_.parent
    if not is_stream(owner):
        return False
    source = owner.args["from_"].this
    if not isinstance(source, exp.Table) or source.name.lower() != alias:
        return False
    outside_own_body = [t for t in _references(owner, alias) if t.find_ancestor(exp.CTE) is None]
    inside_others = [
        t for cte in with_.expressions if cte.alias_or_name.lower() != alias for t in _references(cte, alias)
    ]
    if len(outside_own_body) != 1 or inside_others:
        return False
    # Whatever wraps the owner must hand its rows on too (e.g. Docket's own LIMIT 1 probe).
    node = owner
    while node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.Subquery):
            node = parent
            continue
        if isinstance(parent, exp.From) and is_stream(parent.parent):
            node = parent.parent
            continue
        return False
    return True


def recursive_refusal(with_: exp.With, limits: GuardLimits) -> str | None:
    """Why a WITH RECURSIVE is not provably bounded, or None."""
    for cte in with_.expressions:
        alias, name = cte.alias_or_name.lower(), cte.alias_or_name
        anchors, steps = _parts(cte.this, alias)
        if not steps:
            continue  # not recursive itself
        columns = _columns(cte, anchors)
        for step in steps:
            grown = _growth_refusal(step, columns, alias, name) if isinstance(step, exp.Select) else None
            if grown:
                return grown
        rows, why = literal_rows(cte.this)
        if why:
            return f"recursive CTE {name}: {why}"
        if rows is not None and not cte.this.args.get("order"):
            if rows > limits.max_recursive_rows:
                return (
                    f"recursive CTE {name} has LIMIT {rows:,}, over WAREHOUSE_MAX_RECURSIVE_ROWS "
                    f"({limits.max_recursive_rows:,})"
                )
            continue
        counted = None
        if len(steps) == 1 and isinstance(steps[0], exp.Select):
            counted = counter_steps(anchors, steps[0], columns, alias)
        if counted is not None and counted <= limits.max_recursive_rows:
            continue
        if _read_as_stream(with_, alias):
            continue
        return (
            f"recursive CTE {name} is not provably bounded: add a literal LIMIT on the CTE (at most "
            f"WAREHOUSE_MAX_RECURSIVE_ROWS, {limits.max_recursive_rows:,}), or a WHERE holding a counter under a "
            "literal (n < 100, d < DATE '...'), or read it as a plain stream (no WHERE, join, aggregate or ORDER BY)"
        )
    return None
