"""The one path by which Docket runs SQL against a warehouse: guard → DB enforcement → row cap.

Probes, result previews and the verifier's EXPLAIN all come through `run_readonly`. The
guard refuses what it can recognise; the database enforcement then holds whatever the
guard let through: PostgreSQL runs in a read-only transaction with statement, lock and
idle timeouts (and a read-only role when configured) that is always rolled back; SQLite is
opened `mode=ro` with `PRAGMA query_only`, an authorizer that only permits reads, and a
progress handler that interrupts the statement at the deadline.
"""

import base64
import datetime
import decimal
import sqlite3
import time
import uuid
from dataclasses import asdict, dataclass, field

from django.conf import settings

from probes.guard import guard_sql
from probes.models import Dialect, Warehouse
from probes.warehouses import WarehouseUnavailable, open_postgres, open_sqlite_readonly, warehouse_dsn

CONTRACT_KEYS = ("allowed", "reason", "executed", "rows", "columns", "elapsed_ms", "error")


@dataclass
class ExecutionResult:
    allowed: bool
    reason: str | None = None
    executed: bool = False
    columns: list[str] = field(default_factory=list)
    rows: list[list] = field(default_factory=list)
    elapsed_ms: float = 0.0
    error: str | None = None
    # Beyond the JSON contract: whether the row cap cut the result, and why it failed.
    truncated: bool = False
    timed_out: bool = False
    error_code: str | None = None

    def as_dict(self) -> dict:
        """Return the `run_sql --format json` contract."""
        data = asdict(self)
        return {key: data[key] for key in CONTRACT_KEYS}


def json_safe(value):
    """Turn a database value into something json.dumps accepts without losing meaning."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, decimal.Decimal):
        return float(value) if value == value.to_integral_value() or abs(value) < 1e15 else str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    return str(value)


# SQLite authorizer: reads, SELECT and function calls only. Everything else (writes,
# ATTACH, PRAGMA, transactions, schema changes) is denied before it runs.
_SQLITE_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def _sqlite_authorizer(action, arg1, arg2, db_name, trigger):
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action in _SQLITE_ALLOWED_ACTIONS or action == getattr(sqlite3, "SQLITE_RECURSIVE", 33):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _run_sqlite(dsn: str, sql: str, row_cap: int, timeout_s: float) -> ExecutionResult:
    conn = open_sqlite_readonly(dsn, timeout_s=timeout_s)
    deadline = time.monotonic() + timeout_s
    state = {"timed_out": False}

    def past_deadline():
        if time.monotonic() > deadline:
            state["timed_out"] = True
            return 1
        return 0

    try:
        conn.set_authorizer(_sqlite_authorizer)
        conn.set_progress_handler(past_deadline, 1000)
        try:
            cursor = conn.execute(sql)
            rows = cursor.fetchmany(row_cap + 1)
            columns = [d[0] for d in cursor.description or []]
        except (sqlite3.Error, sqlite3.Warning, OverflowError, MemoryError) as exc:
            if state["timed_out"]:
                return ExecutionResult(
                    True, error=f"timeout: statement exceeded {timeout_s:g}s", timed_out=True, error_code="timeout"
                )
            return ExecutionResult(True, error=str(exc), error_code=_sqlite_error_code(str(exc)))
        return _capped(columns, rows, row_cap)
    finally:
        conn.rollback()
        conn.close()


def _sqlite_error_code(message: str) -> str:
    lowered = message.lower()
    if "no such column" in lowered or "no such table" in lowered:
        return "unknown_object"
    if "no such function" in lowered or "wrong number of arguments" in lowered:
        return "dialect"
    if "syntax error" in lowered or "incomplete input" in lowered or "unrecognized token" in lowered:
        return "syntax"
    if "not authorized" in lowered or "readonly" in lowered or "read-only" in lowered:
        return "refused_by_database"
    return "database_error"


def _postgres_error_code(exc) -> str:
    sqlstate = getattr(exc, "sqlstate", None) or ""
    if sqlstate in ("57014",):
        return "timeout"
    if sqlstate in ("55P03",):
        return "timeout"  # lock_timeout: the probe waited for a lock; give up as a timeout
    if sqlstate in ("42703", "42P01", "42704", "3F000", "42P02"):
        return "unknown_object"
    if sqlstate in ("42883", "42725", "42804", "42846", "22P02"):
        return "dialect"
    if sqlstate in ("42601",):
        return "syntax"
    if sqlstate in ("25006", "42501"):
        return "refused_by_database"
    if sqlstate.startswith("08"):
        return "transport"
    return "database_error"


def _run_postgres(dsn: str, sql: str, row_cap: int, timeout_s: float, role: str) -> ExecutionResult:
    import psycopg

    try:
        conn = open_postgres(dsn, timeout_s=timeout_s, role=role)
    except psycopg.OperationalError as exc:
        return ExecutionResult(True, error=f"transport: {str(exc).splitlines()[0]}", error_code="transport")
    except psycopg.Error as exc:
        return ExecutionResult(True, error=str(exc).strip(), error_code=_postgres_error_code(exc))
    try:
        # A prepared statement goes through the extended protocol: one statement, never two.
        with conn.cursor() as cursor:
            cursor.execute(sql, prepare=True)
            columns = [d.name for d in cursor.description or []]
            rows = cursor.fetchmany(row_cap + 1) if cursor.description else []
        return _capped(columns, rows, row_cap)
    except psycopg.Error as exc:
        code = _postgres_error_code(exc)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if code == "timeout":
            return ExecutionResult(True, error=f"timeout: {message}", timed_out=True, error_code=code)
        return ExecutionResult(True, error=message, error_code=code)
    finally:
        try:
            conn.rollback()
        finally:
            conn.close()


def _capped(columns, rows, row_cap) -> ExecutionResult:
    truncated = len(rows) > row_cap
    rows = [[json_safe(value) for value in row] for row in rows[:row_cap]]
    return ExecutionResult(True, executed=True, columns=list(columns), rows=rows, truncated=truncated)


def run_readonly(
    *, warehouse: Warehouse, sql: str, row_cap: int | None = None, timeout_s: float | None = None
) -> ExecutionResult:
    """Run one SQL text read-only against the warehouse and return what happened."""
    row_cap = settings.WAREHOUSE_ROW_CAP if row_cap is None else max(0, int(row_cap))
    timeout_s = settings.WAREHOUSE_STATEMENT_TIMEOUT_S if timeout_s is None else float(timeout_s)
    started = time.perf_counter()
    verdict = guard_sql(sql, warehouse.dialect)
    if not verdict.allowed:
        return ExecutionResult(False, reason=verdict.reason, elapsed_ms=_ms_since(started))
    result = execute_guarded(warehouse=warehouse, sql=sql, row_cap=row_cap, timeout_s=timeout_s)
    result.elapsed_ms = _ms_since(started)
    return result


def execute_guarded(*, warehouse: Warehouse, sql: str, row_cap: int, timeout_s: float) -> ExecutionResult:
    """Run a text the caller has already guarded, under the database enforcement only.

    Only for texts built by Docket around a guarded query (the verifier's EXPLAIN); every
    other caller uses `run_readonly`.
    """
    try:
        dsn = warehouse_dsn(warehouse)
        if warehouse.dialect == Dialect.POSTGRES:
            return _run_postgres(dsn, sql, row_cap, timeout_s, warehouse.read_only_role)
        return _run_sqlite(dsn, sql, row_cap, timeout_s)
    except WarehouseUnavailable as exc:
        return ExecutionResult(True, error=f"transport: {exc}", error_code="transport")


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
