"""The guard: the second wall between model-written SQL and a warehouse (issue 13).

The first wall is the warehouse's own privileges (a login role that can only read) and the
caps during execution in `probes.execution`; the guard is advice that refuses early and
says why. It works in three steps, and refuses at the first that fails:

1. Before parsing, the raw text: over `WAREHOUSE_MAX_SQL_BYTES`, not valid UTF-8, a
   control character (tab, CR and LF are fine), or anything two readers (sqlglot and the
   database) could read differently: `U&` identifiers and strings, `UESCAPE`, a backslash
   in a quoted identifier, `E'...'` escape strings, dollar quoting, nested block comments
   (PostgreSQL nests them, SQLite does not).
2. Parsing, once per text and dialect (`parse_sql`, cached): the guard, the fingerprint,
   the verifier and the fan-out detector share the tree. Exactly one statement.
3. After parsing, one walk over the tree: a query at the root (SELECT, a set operation,
   WITH ... SELECT) and no statement, write, lock, or session clause anywhere; every
   function on the dialect's allow-list (`probes.allowlist`), not quoted, not
   schema-qualified; no system catalogue (`pg_catalog`, `pg_*`, `sqlite_*`;
   `information_schema` is fine); no more parse-tree nodes, depth, CTEs or joins than the
   settings allow; a recursive CTE only under a literal LIMIT.
"""

import functools
import logging
import re
import unicodedata
from dataclasses import dataclass

import sqlglot
from django.conf import settings
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from probes.allowlist import DIALECTS as ALLOWLIST_DIALECTS
from probes.allowlist import allowed_functions, sqlglot_dialect

# sqlglot logs a warning when it falls back to an opaque Command; the guard refuses those.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


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

# --- limits ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuardLimits:
    max_bytes: int = 65_536
    max_nodes: int = 5_000
    max_depth: int = 100
    max_ctes: int = 32
    max_joins: int = 32
    max_recursive_rows: int = 1_000_000


def current_limits() -> GuardLimits:
    """Read the limits from settings (each is a WAREHOUSE_MAX_* setting)."""
    defaults = GuardLimits()
    return GuardLimits(
        max_bytes=getattr(settings, "WAREHOUSE_MAX_SQL_BYTES", defaults.max_bytes),
        max_nodes=getattr(settings, "WAREHOUSE_MAX_SQL_NODES", defaults.max_nodes),
        max_depth=getattr(settings, "WAREHOUSE_MAX_SQL_DEPTH", defaults.max_depth),
        max_ctes=getattr(settings, "WAREHOUSE_MAX_SQL_CTES", defaults.max_ctes),
        max_joins=getattr(settings, "WAREHOUSE_MAX_SQL_JOINS", defaults.max_joins),
        max_recursive_rows=getattr(settings, "WAREHOUSE_MAX_RECURSIVE_ROWS", defaults.max_recursive_rows),
    )


# --- step 1: the raw text ---------------------------------------------------------------------

# Control characters other than tab, LF and CR (C0, DEL, C1).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_U_AMP = re.compile(r"u&\s*['\"]", re.IGNORECASE)
_UESCAPE = re.compile(r"\buescape\b", re.IGNORECASE)
# Comments, quoted identifiers and string literals, in reading order: an E'...' escape
# string is a literal whose opening quote follows a lone E.
_LEXEMES = re.compile(r"--[^\n]*|/\*.*?\*/|\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*'", re.DOTALL)
_DOLLAR_QUOTE = re.compile(r"\$(?:[A-Za-z_\x80-\uffff][\w\x80-\uffff]*)?\$")
_COMMENT_MARK = re.compile(r"/\*|\*/")
# A quoted identifier followed by "(": a call of a quoted function name (sqlglot may read
# `"LOWER"(x)` as lower(), the database as a different, case-sensitive function), unless it
# names a CTE or an alias with a column list (`AS "t"(a, b)`, `WITH "t"(a) AS (...)`).
_QUOTED_CALL = re.compile(r'"((?:[^"]|"")*)"\s*\(')
_BEFORE_COLUMN_LIST = re.compile(r"(?:\bas|\bwith|\brecursive|\))\s*$", re.IGNORECASE)
_CTE_COLUMN_LIST = re.compile(r"[^()]*\)\s*as\s*(?:not\s+)?(?:materialized\s*)?\(", re.IGNORECASE)
# A rough token count (a quoted string or a word is one token), so that a text with more
# tokens than the node limit could ever allow is refused without paying for a parse.
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|\w+|[^\w\s]")
TOKENS_PER_NODE = 2


def _control_character(sql: str) -> str | None:
    match = _CONTROL.search(sql)
    if match:
        char = match.group()
        name = "NUL" if char == "\x00" else unicodedata.name(char, "control character")
        return f"U+{ord(char):04X} ({name})"
    for match in _NON_ASCII.finditer(sql):
        char = match.group()
        if unicodedata.category(char) in ("Cf", "Cs", "Co", "Cn"):
            return f"U+{ord(char):04X} ({unicodedata.name(char, 'format or unassigned character')})"
    return None


def _nested_comment(sql: str) -> bool:
    depth = 0
    for match in _COMMENT_MARK.finditer(sql):
        if match.group() == "/*":
            depth += 1
            if depth > 1:
                return True
        elif depth:
            depth -= 1
    return False


def _quoting_refusal(sql: str) -> str | None:
    """Read literals, quoted identifiers and comments in order; refuse escapes inside them."""
    for match in _LEXEMES.finditer(sql):
        start, lexeme = match.start(), match.group()
        if lexeme[0] == '"' and "\\" in lexeme:
            return "a backslash in a quoted identifier (a Unicode escape the guard cannot check)"
        if lexeme[0] == "'" and start and sql[start - 1] in "eE" and (start < 2 or not _is_word(sql[start - 2])):
            return "an E'...' escape string (the database and the guard could read it differently)"
    return None


def _is_word(char: str) -> bool:
    return char.isalnum() or char in "_$"


def _quoted_call(sql: str) -> str | None:
    for match in _QUOTED_CALL.finditer(sql):
        before = sql[max(0, match.start() - 20) : match.start()]
        if _BEFORE_COLUMN_LIST.search(before):
            continue
        if before.rstrip().endswith(",") and _CTE_COLUMN_LIST.match(sql, match.end()):
            continue
        return match.group(1)
    return None


def text_refusal(sql: str, limits: GuardLimits) -> str | None:
    """Return why the raw text is refused before parsing, or None."""
    try:
        size = len(sql.encode("utf-8"))
    except UnicodeEncodeError:
        return "the SQL text is not valid UTF-8 (a lone surrogate)"
    if size > limits.max_bytes:
        return f"the SQL text is {size:,} bytes, over WAREHOUSE_MAX_SQL_BYTES ({limits.max_bytes:,})"
    control = _control_character(sql)
    if control:
        return f"control character {control} in the SQL text"
    if _U_AMP.search(sql):
        return "a U& Unicode-escaped identifier or string (the database and the guard could read it differently)"
    if _UESCAPE.search(sql):
        return "UESCAPE (the database and the guard could read it differently)"
    quoting = _quoting_refusal(sql) if ("'" in sql or '"' in sql) else None
    if quoting:
        return quoting
    if _DOLLAR_QUOTE.search(sql):
        return "a dollar-quoted string (the database and the guard could read it differently)"
    if _nested_comment(sql):
        return "a nested block comment (PostgreSQL nests /* */, SQLite does not)"
    if '"' in sql:
        quoted = _quoted_call(sql)
        if quoted is not None:
            return f'quoted function name "{quoted}" is not allowed'

    tokens = sum(1 for _ in _TOKEN.finditer(sql))
    if tokens > TOKENS_PER_NODE * limits.max_nodes:
        return f"the SQL text has {tokens:,} tokens, more than WAREHOUSE_MAX_SQL_NODES ({limits.max_nodes:,}) allows"
    return None


# --- step 2: parsing, once per text ------------------------------------------------------------


def parse_error_message(error: ParseError) -> str:
    """Return 'parse error at line L, column C: description' for the first error."""
    if error.errors:
        first = error.errors[0]
        description = re.sub(r"\x1b\[[0-9;]*m", "", str(first.get("description", "")))
        description = description.split(". Line ")[0]
        incomplete = re.match(r"Required keyword: '\w+' missing for <class '[\w.]+\.(\w+)'>", description)
        if incomplete:
            description = f"incomplete {incomplete.group(1).upper()} clause"
        return f"parse error at line {first.get('line')}, column {first.get('col')}: {description}"
    return f"parse error: {str(error).splitlines()[0]}"


def parse_statements(sql: str, dialect: str) -> list[exp.Expression]:
    """Parse every statement of the text; raise ParseError/SqlglotError if it is not SQL."""
    return [tree for tree in sqlglot.parse(sql, read=sqlglot_dialect(dialect)) if tree is not None]


@dataclass(frozen=True)
class ParsedSQL:
    """A text read once: its statements (shared, do not mutate) and the guard's verdict.

    `stage` says where it stopped: "text" (refused before parsing), "syntax" (not one
    statement of SQL), "guard" (parsed, refused by the checks on the tree) or "ok".
    """

    dialect: str
    statements: tuple[exp.Expression, ...]
    verdict: GuardResult
    stage: str
    syntax_error: str | None = None

    @property
    def tree(self) -> exp.Expression | None:
        return self.statements[0] if len(self.statements) == 1 else None


def parse_sql(sql: str, dialect: str) -> ParsedSQL:
    """Read a text in a dialect, once: later calls with the same text share the result."""
    limits = current_limits()
    if sql and len(sql) > limits.max_bytes:
        # Refused unread; not cached, so a few huge posted texts cannot fill memory.
        return _parse_cached.__wrapped__(sql, sqlglot_dialect(dialect), limits)
    return _parse_cached(sql or "", sqlglot_dialect(dialect), limits)


@functools.lru_cache(maxsize=64)
def _parse_cached(sql: str, dialect: str, limits: GuardLimits) -> ParsedSQL:
    if not sql.strip():
        return ParsedSQL(dialect, (), GuardResult(False, "empty SQL text", "syntax"), "syntax", "empty SQL text")
    refusal = text_refusal(sql, limits)
    if refusal:
        return ParsedSQL(dialect, (), GuardResult(False, refusal, "text"), "text")
    try:
        statements = tuple(parse_statements(sql, dialect))
    except ParseError as error:
        message = parse_error_message(error)
        return ParsedSQL(dialect, (), GuardResult(False, f"unparseable: {message}", "syntax"), "syntax", message)
    except SqlglotError as error:
        message = f"parse error: {str(error).splitlines()[0]}"
        return ParsedSQL(dialect, (), GuardResult(False, f"unparseable: {message}", "syntax"), "syntax", message)
    except RecursionError:
        message = f"nested too deeply to parse (WAREHOUSE_MAX_SQL_DEPTH is {limits.max_depth})"
        return ParsedSQL(dialect, (), GuardResult(False, f"unparseable: {message}", "syntax"), "syntax", message)
    if len(statements) != 1:
        found = f"exactly one statement is allowed; found {len(statements)}"
        return ParsedSQL(dialect, statements, GuardResult(False, found, "syntax"), "syntax", found)
    verdict = guard_tree(statements[0], dialect, limits, sql)
    return ParsedSQL(dialect, statements, verdict, "ok" if verdict.allowed else "guard")


# --- step 3: the tree ----------------------------------------------------------------------------


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
    """Name a typed node as the text spelled it: sqlglot's own name may differ (TimeToStr)."""
    if sql:
        allowed = allowed_functions(dialect).names
        for match in _CALLED_NAME.finditer(sql):
            name = match.group(1).lower()
            if name not in allowed and name not in _NOT_CALLS:
                return name
    return node.sql_name().lower()


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


def _catalogue_refusal(node: exp.Table) -> str | None:
    name, schema = node.name.lower(), (node.db or "").lower()
    if schema.startswith("pg_") or name.startswith(("pg_", "sqlite_")) or name == "dbstat":
        label = f"{node.db}.{node.name}" if node.db else node.name
        return f"reading the system catalogue ({label}) is not allowed"
    return None


def _literal_limit(query: exp.Expression | None) -> int | None:
    if query is None:
        return None
    limit = query.args.get("limit")
    if isinstance(limit, exp.Limit):
        value = limit.expression
    elif isinstance(limit, exp.Fetch):
        value = limit.args.get("count")
    else:
        return None
    if isinstance(value, exp.Literal) and not value.is_string and value.name.isdigit():
        return int(value.name)
    return None


def _recursive_refusal(with_: exp.With, limits: GuardLimits) -> str | None:
    owner_limit = _literal_limit(with_.parent)
    for cte in with_.expressions:
        alias = cte.alias_or_name.lower()
        body = cte.this
        if not any(table.name.lower() == alias and not table.db for table in body.find_all(exp.Table)):
            continue  # not recursive itself
        limit = _literal_limit(body)
        limit = owner_limit if limit is None else limit
        if limit is None:
            return (
                f"recursive CTE {cte.alias_or_name} has no LIMIT; add one on the CTE or the query reading it "
                f"(at most WAREHOUSE_MAX_RECURSIVE_ROWS, {limits.max_recursive_rows:,})"
            )
        if limit > limits.max_recursive_rows:
            return (
                f"recursive CTE {cte.alias_or_name} has LIMIT {limit:,}, over WAREHOUSE_MAX_RECURSIVE_ROWS "
                f"({limits.max_recursive_rows:,})"
            )
    return None


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
        reason = kind = None
        if isinstance(node, exp.Func):
            reason, kind = _function_refusal(node, dialect, sql), "function"
        elif isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            function = f"{node.this.sql()}.{node.expression.name.lower()}()"
            reason, kind = f"schema-qualified function {function} is not allowed", "function"
        elif isinstance(node, exp.Table):
            reason, kind = _catalogue_refusal(node), "catalogue"
        elif isinstance(node, exp.Join):
            joins += 1
            if joins > limits.max_joins:
                reason, kind = f"more than WAREHOUSE_MAX_SQL_JOINS ({limits.max_joins}) joins", "limit"
        elif isinstance(node, exp.CTE):
            ctes += 1
            if ctes > limits.max_ctes:
                reason, kind = f"more than WAREHOUSE_MAX_SQL_CTES ({limits.max_ctes}) CTEs", "limit"
        elif isinstance(node, exp.With) and node.args.get("recursive"):
            reason, kind = _recursive_refusal(node, limits), "limit"
        if reason:
            return GuardResult(False, reason, kind)
        # Children in reverse, so the walk meets them in reading order (SELECT list before FROM).
        stack.extend(reversed([(child, depth + 1) for child in node.iter_expressions()]))
    return ALLOWED


def guard_sql(sql: str, dialect: str) -> GuardResult:
    """Decide whether a SQL text may be sent to a warehouse of this dialect."""
    return parse_sql(sql, dialect).verdict
