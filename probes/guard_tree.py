"""The guard's third step: checks on the one parsed statement, in one walk over the tree.

A query at the root (SELECT, a set operation, WITH ... SELECT) and no statement, write,
lock, or session clause anywhere; every function on the dialect's allow-list
(`probes.allowlist`), not quoted, not schema-qualified; nothing beyond the grant
(`probes.guard_visibility`: no system catalogue or information_schema, no reg* cast,
whole-row reference or server identity); no more parse-tree nodes, depth, CTEs or joins
than the settings allow; nothing that grows past its limit inside one call
(`probes.guard_growth`: literals, built strings, patterns, grouping sets); a recursive CTE
only when it provably stops (`probes.guard_recursive`).
"""

import re
from dataclasses import dataclass

from sqlglot import exp

from probes.allowlist import DIALECTS as ALLOWLIST_DIALECTS
from probes.allowlist import allowed_functions, sqlglot_dialect
from probes.guard_duckdb import duckdb_table_refusal
from probes.guard_growth import Lengths, growth_refusal
from probes.guard_limits import GuardLimits, current_limits
from probes.guard_mysql import mysql_schema_refusal
from probes.guard_recursive import recursive_refusal
from probes.guard_visibility import cast_refusal, catalogue_refusal, column_refusal, cte_names

# A dialect's own refusals of a table (issue 34): MySQL's system schemas, DuckDB's file scans.
DIALECT_TABLE_REFUSALS = {"mysql": mysql_schema_refusal, "duckdb": duckdb_table_refusal}


def _no_table_refusal(node) -> None:
    return None


@dataclass(frozen=True)
class GuardResult:
    allowed: bool
    reason: str | None = None
    # What refused it: "text" (before parsing), "syntax", "statement" (not a read-only
    # query), "function", "catalogue" or "limit".
    kind: str | None = None


ALLOWED = GuardResult(True, None)

# Statement or clause nodes that write, change the schema, change the session or escape
# the query language. Any of them anywhere in the tree (a CTE body included) refuses.
FORBIDDEN_NODES: tuple[tuple[type, str], ...] = tuple(
    (getattr(exp, name), label)
    for name, label in [
        ("Insert", "INSERT"),
        ("Update", "UPDATE"),
        ("Delete", "DELETE"),
        ("Merge", "MERGE"),
        ("Create", "CREATE"),
        ("Drop", "DROP"),
        ("Alter", "ALTER"),
        ("TruncateTable", "TRUNCATE"),
        ("Copy", "COPY"),
        ("Set", "SET"),
        ("Pragma", "PRAGMA"),
        ("Attach", "ATTACH"),
        ("Detach", "DETACH"),
        ("Into", "SELECT ... INTO"),
        ("Lock", "a locking clause (FOR UPDATE/SHARE)"),
        ("Transaction", "a transaction statement"),
        ("Commit", "COMMIT"),
        ("Rollback", "ROLLBACK"),
        ("Grant", "GRANT"),
        ("Revoke", "REVOKE"),
        ("Use", "USE"),
        ("Analyze", "ANALYZE"),
        ("LoadData", "LOAD DATA"),
        ("Comment", "COMMENT"),
        ("Refresh", "REFRESH"),
        ("Kill", "KILL"),
        ("Cache", "CACHE"),
        ("Uncache", "UNCACHE"),
        ("Declare", "DECLARE"),
        ("Execute", "EXECUTE"),
        ("Export", "EXPORT"),
        ("Describe", "DESCRIBE"),
        ("Show", "SHOW"),
        ("Lambda", "a lambda"),
        ("Command", "a statement sqlglot cannot read as a query"),
    ]
    if hasattr(exp, name)
)
FORBIDDEN_TYPES = tuple(node_type for node_type, _ in FORBIDDEN_NODES)
ROOT_QUERY_TYPES = (exp.Select, exp.SetOperation, exp.Subquery)


def _forbidden_label(node: exp.Expression) -> str:
    for node_type, label in FORBIDDEN_NODES:
        if isinstance(node, node_type):
            return label
    return type(node).__name__.upper()


_CALLED_NAME = re.compile(r"([A-Za-z_][\w$]*)\s*\(")
# Words followed by "(" in SQL that are not function calls.
_NOT_CALLS = frozenset(
    [
        "select",
        "from",
        "where",
        "in",
        "exists",
        "values",
        "over",
        "as",
        "and",
        "or",
        "not",
        "on",
        "using",
        "join",
        "filter",
        "within",
        "any",
        "all",
        "some",
        "some",
        "array",
        "row",
        "cast",
        "extract",
        "position",
        "overlay",
        "substring",
        "trim",
        "with",
        "recursive",
        "materialized",
        "union",
        "intersect",
        "except",
        "limit",
        "offset",
        "fetch",
        "group",
        "order",
        "by",
        "partition",
        "window",
        "having",
        "is",
        "between",
        "like",
        "ilike",
        "similar",
        "to",
        "when",
        "then",
        "else",
        "case",
        "end",
        "distinct",
        "lateral",
        "table",
        "only",
        "returning",
    ]
)


def _typed_name(node: exp.Func, dialect: str, sql: str | None) -> str:
    """Name a typed node as the text spelled it: sqlglot's own name may differ (TimeToStr).

    A name after AS (`AS s(x)`, a column list) is an alias, not a call.
    """
    if sql:
        allowed = allowed_functions(dialect).names
        for match in _CALLED_NAME.finditer(sql):
            name = match.group(1).lower()
            if (
                name in allowed
                or name in _NOT_CALLS
                or _AFTER_AS.search(sql[max(0, match.start() - 40) : match.start()])
            ):
                continue
            return name
    return node.sql_name().lower()


_AFTER_AS = re.compile(r"\bas\s*$", re.IGNORECASE)


def _function_refusal(node: exp.Func, dialect: str, sql: str | None = None) -> str | None:
    allowed = allowed_functions(dialect)
    if isinstance(node, exp.Anonymous):
        if isinstance(node.this, exp.Identifier) and node.this.quoted:
            return f'quoted function name "{node.name}" is not allowed'
        name = node.name.lower()
        if name in allowed.anonymous:
            return None
    elif type(node) in allowed.node_types:
        return None
    else:
        name = _typed_name(node, dialect, sql)
    return f"function {name}() is not on the {dialect} allow-list"


def guard_tree(
    tree: exp.Expression, dialect: str = "postgres", limits: GuardLimits | None = None, sql: str | None = None
) -> GuardResult:
    """Check one parsed statement: a read-only query within the limits, calling only allowed functions."""
    limits = limits or current_limits()
    dialect = sqlglot_dialect(dialect)
    if dialect not in ALLOWLIST_DIALECTS:
        return GuardResult(False, f"no function allow-list for dialect {dialect}", "function")
    if not isinstance(tree, ROOT_QUERY_TYPES) or (
        isinstance(tree, exp.Subquery) and not isinstance(tree.unnest(), exp.Query)
    ):
        return GuardResult(False, f"only a query may run; this is {type(tree).__name__.upper()}", "statement")
    nodes = ctes = joins = 0
    lengths, ctes_named = Lengths(tree), cte_names(tree)
    # A growth refusal waits for the end of the walk: what the text calls or reads, when also
    # refused, is the better reason to give.
    grown: str | None = None
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > limits.max_nodes:
            return GuardResult(
                False, f"more than WAREHOUSE_MAX_SQL_NODES ({limits.max_nodes:,}) parse-tree nodes", "limit"
            )
        if depth > limits.max_depth:
            return GuardResult(False, f"nested deeper than WAREHOUSE_MAX_SQL_DEPTH ({limits.max_depth})", "limit")
        if isinstance(node, FORBIDDEN_TYPES):
            return GuardResult(False, f"{_forbidden_label(node)} is not allowed in a read-only probe", "statement")
        grown = grown or growth_refusal(node, lengths, limits)
        reason = kind = None
        if isinstance(node, exp.Cast | exp.TryCast) and cast_refusal(node):
            reason, kind = cast_refusal(node), "catalogue"
        elif isinstance(node, exp.Func):
            reason, kind = _function_refusal(node, dialect, sql), "function"
        elif isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            function = f"{node.this.sql()}.{node.expression.name.lower()}()"
            reason, kind = f"schema-qualified function {function} is not allowed", "function"
        elif isinstance(node, exp.Table):
            reason = catalogue_refusal(node) or DIALECT_TABLE_REFUSALS.get(dialect, _no_table_refusal)(node)
            kind = "catalogue"
        elif isinstance(node, exp.Column):
            reason, kind = column_refusal(node, dialect, ctes_named), "catalogue"
        elif isinstance(node, exp.Join):
            joins += 1
            if joins > limits.max_joins:
                reason, kind = f"more than WAREHOUSE_MAX_SQL_JOINS ({limits.max_joins}) joins", "limit"
        elif isinstance(node, exp.CTE):
            ctes += 1
            if ctes > limits.max_ctes:
                reason, kind = f"more than WAREHOUSE_MAX_SQL_CTES ({limits.max_ctes}) CTEs", "limit"
        elif isinstance(node, exp.With) and node.args.get("recursive"):
            reason, kind = recursive_refusal(node, limits), "limit"
        if reason:
            return GuardResult(False, reason, kind)
        # Children in reverse, so the walk meets them in reading order (SELECT list before FROM).
        stack.extend(reversed([(child, depth + 1) for child in node.iter_expressions()]))
    return GuardResult(False, grown, "limit") if grown else ALLOWED
