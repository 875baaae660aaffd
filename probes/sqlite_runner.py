"""Running SQL on a SQLite warehouse under the database's own enforcement and the caps.

Opened `mode=ro` with `PRAGMA query_only` (`probes.warehouses.open_sqlite_readonly`), an
authorizer that only permits reads, `Connection.setlimit` on string/blob length, SQL
length, compound SELECTs and expression depth, no ATTACH, a heap limit, a printf that
refuses widths it would spend minutes filling, and a progress handler that interrupts at
the deadline.
"""

import re
import sqlite3
import time

from django.conf import settings

from probes.results import ExecutionResult, ResultCollector
from probes.warehouses import open_sqlite_readonly

# SQLite authorizer: reads, SELECT and function calls only. Everything else (writes,
# ATTACH, PRAGMA, transactions, schema changes) is denied before it runs.
_SQLITE_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
# Compound SELECTs and expression depth an analytical query stays far below.
SQLITE_MAX_COMPOUND_SELECT = 100
SQLITE_MAX_EXPR_DEPTH = 200
# Room for what Docket wraps around a guarded text (the verifier's EXPLAIN QUERY PLAN).
SQL_LENGTH_SLACK = 4096


def _sqlite_authorizer(action, arg1, arg2, db_name, trigger):
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action in _SQLITE_ALLOWED_ACTIONS or action == getattr(sqlite3, "SQLITE_RECURSIVE", 33):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def limit_length() -> int:
    return int(settings.WAREHOUSE_SQLITE_MAX_LENGTH)


def limit_sqlite(conn: sqlite3.Connection) -> None:
    """Cap what one SQLite statement may build: string/blob length, SQL length, shape, heap, printf."""
    # The heap limit is process-wide and can only be lowered: it also bounds other SQLite
    # connections of this process, which stay far below it.
    conn.execute(f"PRAGMA hard_heap_limit = {int(settings.WAREHOUSE_SQLITE_HEAP_LIMIT)}")
    max_sql = int(getattr(settings, "WAREHOUSE_MAX_SQL_BYTES", 65_536)) + SQL_LENGTH_SLACK
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limit_length())
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, max_sql)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, SQLITE_MAX_COMPOUND_SELECT)
    conn.setlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH, SQLITE_MAX_EXPR_DEPTH)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    printf = bounded_printf(limit_length())
    for name in ("printf", "format"):
        conn.create_function(name, -1, printf)


# A width or precision in a printf format: SQLite 3.40 fills it one character at a time,
# inside one function call the progress handler never interrupts (2e9 took 85 s).
_PRINTF_SPEC = re.compile(r"%[-+ 0#,!]*(\*|\d+)?(?:\.(\*|\d+))?")


class PrintfTooWide(ValueError):
    """A printf width or precision past the SQLite length limit."""


def bounded_printf(limit: int):
    """Return printf/format that refuses a width or precision over `limit`, else runs SQLite's own.

    The built-in is run on a private in-memory connection, so the result is exactly
    SQLite's; only the widths it would spend minutes filling are refused first.
    """
    builtin = sqlite3.connect(":memory:", check_same_thread=False)
    builtin.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limit)

    def printf(template, *args):
        if template is None:
            return None
        text = str(template)
        sizes = [int(n) for spec in _PRINTF_SPEC.findall(text) for n in spec if n.isdigit()]
        if "*" in text:
            sizes += [abs(a) for a in args if isinstance(a, int)]
        if any(size > limit for size in sizes):
            raise PrintfTooWide(f"printf width or precision over the {limit}-byte length limit")
        marks = ", ".join("?" * (1 + len(args)))
        return builtin.execute(f"SELECT printf({marks})", (template, *args)).fetchone()[0]

    return printf


def sqlite_run(dsn: str, sql: str, row_cap: int, timeout_s: float) -> ExecutionResult:
    conn = open_sqlite_readonly(dsn, timeout_s=timeout_s)
    deadline = time.monotonic() + timeout_s
    state = {"timed_out": False}

    def past_deadline():
        if time.monotonic() > deadline:
            state["timed_out"] = True
            return 1
        return 0

    collector = ResultCollector(row_cap)
    try:
        limit_sqlite(conn)
        conn.set_authorizer(_sqlite_authorizer)
        conn.set_progress_handler(past_deadline, 1000)
        try:
            cursor = conn.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            while batch := cursor.fetchmany(50):
                if not all(collector.add(row) for row in batch):
                    break
        except (sqlite3.Error, sqlite3.Warning, OverflowError, MemoryError) as exc:
            if state["timed_out"]:
                return ExecutionResult(
                    True, error=f"timeout: statement exceeded {timeout_s:g}s", timed_out=True, error_code="timeout"
                )
            message = str(exc)
            if "user-defined function raised exception" in message:
                message = f"refused by a limit: a printf width or precision over {limit_length()} bytes"
            return ExecutionResult(True, error=message, error_code=_sqlite_error_code(str(exc)))
        return collector.result(columns)
    finally:
        conn.rollback()
        conn.close()


# Messages that mean the SQL itself is wrong (probes.outcome reads "dialect" as a failure of
# the SQL; an unlisted message is a fault of the check).
SQLITE_SQL_WRONG = (
    "ambiguous column name",
    "misuse of aggregate",
    "misuse of window function",
    "term out of range",
    "a group by clause is required before having",
    "do not have the same number of result columns",
    "row value misused",
    "sub-select returns",
)


def _sqlite_error_code(message: str) -> str:
    lowered = message.lower()
    if "no such column" in lowered or "no such table" in lowered:
        return "unknown_object"
    if "no such function" in lowered or "wrong number of arguments" in lowered:
        return "dialect"
    if any(wrong in lowered for wrong in SQLITE_SQL_WRONG):
        return "dialect"
    if "syntax error" in lowered or "incomplete input" in lowered or "unrecognized token" in lowered:
        return "syntax"
    if "not authorized" in lowered or "readonly" in lowered or "read-only" in lowered:
        return "refused_by_database"
    if "too big" in lowered or "too long" in lowered or "too many" in lowered or "too deep" in lowered:
        return "limit"
    if "out of memory" in lowered or "user-defined function raised exception" in lowered:
        return "limit"
    return "database_error"
