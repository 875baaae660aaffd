"""The one path by which Docket runs SQL against a warehouse.

Probes, result previews, `run_sql` and the verifier's EXPLAIN all come through here, in
this order: the guard (`probes.guard`) → the role check (a PostgreSQL warehouse whose
login role can do more than read runs nothing, `probes.role_check`) → the database's own
enforcement → caps during execution.

- PostgreSQL: a read-only transaction that is always rolled back, statement, lock and idle
  timeouts and planner limits (`join_collapse_limit`, `from_collapse_limit`,
  `geqo_threshold`) set when connecting, no `SET ROLE` (a role set inside a session can be
  unset inside it). Rows stream (single-row mode) and stop at the row cap or the byte cap;
  a cell longer than the cell cap is cut on the server before it is sent. A query still
  running just after its timeout is cancelled over the cancel protocol (a second
  connection, no privilege needed) and then terminated; a timed-out query's backend is
  checked gone.
- SQLite: opened `mode=ro` with `PRAGMA query_only`, an authorizer that only permits reads,
  `Connection.setlimit` on string/blob length, SQL length, compound SELECTs and expression
  depth, no ATTACH, a heap limit, and a progress handler that interrupts at the deadline.
"""

import base64
import contextlib
import datetime
import decimal
import re
import sqlite3
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field

import psycopg
from django.conf import settings
from psycopg import pq

from probes.guard import guard_sql
from probes.models import Catalogue, Dialect, Warehouse
from probes.role_check import postgres_role_check, role_check_blocks
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
    # Beyond the JSON contract: whether a cap cut the result (and which), how many cells
    # were cut, why it failed, and whether a timed-out query's backend was seen gone.
    truncated: bool = False
    truncated_by: str | None = None
    cells_truncated: int = 0
    result_bytes: int = 0
    timed_out: bool = False
    error_code: str | None = None
    backend_gone: bool | None = None

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


# --- caps on what comes back --------------------------------------------------------------


class CutCell(str):
    """A cell already cut to the cell cap and marked (kept as is)."""


def truncation_mark(kept: str, total_bytes: int) -> CutCell:
    """Return a cut cell: its first bytes and a mark saying how long it was."""
    return CutCell(f"{kept}… [cut: {total_bytes} bytes, first {settings.WAREHOUSE_CELL_MAX_BYTES} kept]")


class ResultCollector:
    """Keep rows until the row cap or the byte cap; cut long cells; count what was kept."""

    def __init__(self, row_cap: int):
        self.row_cap = row_cap
        self.byte_cap = settings.WAREHOUSE_RESULT_MAX_BYTES
        self.cell_cap = settings.WAREHOUSE_CELL_MAX_BYTES
        self.rows: list[list] = []
        self.bytes = 0
        self.cells_truncated = 0
        self.truncated_by: str | None = None

    def cell(self, value):
        if isinstance(value, CutCell):
            return str(value)
        value = json_safe(value)
        if isinstance(value, str) and len(value) * 4 > self.cell_cap:
            encoded = value.encode()
            if len(encoded) > self.cell_cap:
                self.cells_truncated += 1
                value = truncation_mark(encoded[: self.cell_cap].decode(errors="ignore"), len(encoded))
        return value

    def add(self, row) -> bool:
        """Keep one row; return False once a cap is reached (the row is then not kept)."""
        if len(self.rows) >= self.row_cap:
            self.truncated_by = "row_cap"
            return False
        kept = [self.cell(value) for value in row]
        size = sum(_size(value) for value in kept)
        if self.bytes + size > self.byte_cap:
            self.truncated_by = "byte_cap"
            return False
        self.bytes += size
        self.rows.append(kept)
        return True

    def result(self, columns) -> ExecutionResult:
        return ExecutionResult(
            True,
            executed=True,
            columns=list(columns),
            rows=self.rows,
            truncated=self.truncated_by is not None,
            truncated_by=self.truncated_by,
            cells_truncated=self.cells_truncated,
            result_bytes=self.bytes,
        )


def _size(value) -> int:
    """Approximate bytes a kept value takes in the stored (JSON) result."""
    if value is None or isinstance(value, bool | int | float):
        return 8
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, list):
        return sum(_size(item) for item in value) + 2
    if isinstance(value, dict):
        return sum(len(str(key)) + _size(item) for key, item in value.items()) + 2
    return len(str(value))


# --- SQLite ------------------------------------------------------------------------------

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


def _run_sqlite(dsn: str, sql: str, row_cap: int, timeout_s: float) -> ExecutionResult:
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
    if "too big" in lowered or "too long" in lowered or "too many" in lowered or "too deep" in lowered:
        return "limit"
    if "out of memory" in lowered or "user-defined function raised exception" in lowered:
        return "limit"
    return "database_error"


# --- PostgreSQL --------------------------------------------------------------------------


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
    if sqlstate in ("54000", "54001", "53200"):
        return "limit"
    if sqlstate.startswith("08") or sqlstate == "57P01":
        return "transport"
    return "database_error"


# Result types whose text form is short by construction; any other column may be long and
# is cut on the server (bool, int2/4/8, oid, float4/8, money, date, time, timestamp(tz),
# interval, timetz, uuid, "char", name).
SHORT_TYPE_OIDS = frozenset({16, 18, 19, 20, 21, 23, 26, 700, 701, 790, 1082, 1083, 1114, 1184, 1186, 1266, 2950})


def _describe(conn, sql: str) -> list[tuple[str, int]] | None:
    """Return the (name, type oid) of each result column, or None if it cannot be described.

    An unnamed prepared statement goes through the extended protocol: one statement, never
    two, and nothing runs.
    """
    pgconn = conn.pgconn
    for result in (pgconn.prepare(b"", sql.encode()), pgconn.describe_prepared(b"")):
        if result.status == pq.ExecStatus.FATAL_ERROR:
            raise psycopg.errors.error_from_result(result, encoding=conn.info.encoding)
        if result.status != pq.ExecStatus.COMMAND_OK:
            return None
    described = result
    return [(described.fname(i).decode(errors="replace"), described.ftype(i)) for i in range(described.nfields)]


def capped_select(sql: str, described: list[tuple[str, int]], cell_cap: int) -> tuple[str, list[tuple[str, bool]]]:
    """Wrap a query so that no cell longer than `cell_cap` bytes leaves the server.

    Each possibly-long column comes back as two: the value when short (NULL otherwise), and
    `"<octet length>:<first characters>"` when long (NULL otherwise). Returns the text and,
    per original column, (name, was split).
    """
    body = sql.strip().rstrip(";").rstrip()
    aliases = [f"c{i}" for i in range(len(described))]
    select, layout = [], []
    for alias, (name, oid) in zip(aliases, described, strict=True):
        if oid in SHORT_TYPE_OIDS:
            select.append(f"docket_q.{alias}")
            layout.append((name, False))
            continue
        text = f"docket_q.{alias}::text"
        too_long = f"octet_length({text}) > {int(cell_cap)}"
        select.append(f"CASE WHEN {too_long} THEN NULL ELSE docket_q.{alias} END")
        long_form = f"octet_length({text})::text || ':' || left({text}, {int(cell_cap)})"
        select.append(f"CASE WHEN {too_long} THEN {long_form} END")
        layout.append((name, True))
    # OFFSET 0 keeps the query from being flattened into the wrapper, so each value is
    # computed once per row, not once per reference.
    inner = f"SELECT * FROM (\n{body}\n) AS docket_b OFFSET 0"
    wrapped = f"SELECT {', '.join(select)} FROM ({inner}) AS docket_q({', '.join(aliases)})"
    return wrapped, layout


def _unsplit(row, layout, collector: ResultCollector) -> list:
    """Rebuild one row of a `capped_select` result: a long cell becomes its marked prefix."""
    values, position = [], 0
    for _name, split in layout:
        if not split:
            values.append(row[position])
            position += 1
            continue
        value, long_form = row[position], row[position + 1]
        position += 2
        if long_form is not None:
            length, _, prefix = long_form.partition(":")
            encoded = prefix.encode()[: collector.cell_cap]
            collector.cells_truncated += 1
            value = truncation_mark(encoded.decode(errors="ignore"), int(length))
        values.append(value)
    return values


class Watchdog:
    """Cancel a statement still running just after its timeout; terminate it if cancel fails.

    The cancel goes over PostgreSQL's cancel protocol on a second connection (no privilege
    needed); terminating uses another connection as the same login role, which may signal
    its own backends.
    """

    GRACE_S = 0.3
    TERMINATE_AFTER_S = 1.0

    def __init__(self, conn, dsn: str, timeout_s: float):
        self.conn, self.dsn = conn, dsn
        self.pid = conn.info.backend_pid
        self.fired = False
        self._cancel = threading.Timer(timeout_s + self.GRACE_S, self._cancel_statement)
        self._terminate = threading.Timer(timeout_s + self.GRACE_S + self.TERMINATE_AFTER_S, self._terminate_backend)
        for timer in (self._cancel, self._terminate):
            timer.daemon = True

    def __enter__(self):
        self._cancel.start()
        self._terminate.start()
        return self

    def __exit__(self, *exc):
        self._cancel.cancel()
        self._terminate.cancel()

    def _cancel_statement(self):
        self.fired = True
        # A failed cancel is not an error here: the terminate timer is the next step.
        with contextlib.suppress(Exception):
            self.conn.cancel_safe(timeout=1.0)

    def _terminate_backend(self):
        terminate_backend(self.dsn, self.pid)


def terminate_backend(dsn: str, pid: int) -> None:
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=2) as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
    except psycopg.Error:
        pass


def backend_gone(dsn: str, pid: int, wait_s: float = 1.0) -> bool:
    """Check from a second connection that backend `pid` has ended; terminate it if not."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=2) as other:
            deadline = time.monotonic() + wait_s
            while True:
                alive = other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
                if not alive:
                    return True
                if time.monotonic() > deadline:
                    other.execute("SELECT pg_terminate_backend(%s)", [pid])
                    return False
                time.sleep(0.02)
    except psycopg.Error:
        return False


def _run_postgres(
    dsn: str, sql: str, row_cap: int, timeout_s: float, *, expected_role: str = "", cap_cells: bool = True
) -> ExecutionResult:
    try:
        conn = open_postgres(dsn, timeout_s=timeout_s, planner_limits=True)
    except psycopg.OperationalError as exc:
        return ExecutionResult(True, error=f"transport: {str(exc).splitlines()[0]}", error_code="transport")
    except psycopg.Error as exc:
        return ExecutionResult(True, error=str(exc).strip(), error_code=_postgres_error_code(exc))
    if expected_role and conn.info.user != expected_role:
        login = conn.info.user
        conn.close()
        message = (
            f"refused: the DSN now logs in as {login!r}, not the checked role {expected_role!r}; run refresh_catalogue"
        )
        return ExecutionResult(False, reason=message, error=message, error_code="unsafe_role")
    pid = conn.info.backend_pid
    watchdog = Watchdog(conn, dsn, timeout_s)
    result = None
    try:
        with watchdog:
            result = _stream_postgres(conn, sql, row_cap, cap_cells)
    except psycopg.Error as exc:
        code = _postgres_error_code(exc)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if code == "timeout" or watchdog.fired:
            result = ExecutionResult(True, error=f"timeout: {message}", timed_out=True, error_code="timeout")
        else:
            result = ExecutionResult(True, error=message, error_code=code)
    finally:
        try:
            if not conn.closed:
                conn.rollback()
        except psycopg.Error:
            pass
        finally:
            conn.close()
    if result.timed_out or watchdog.fired:
        result.backend_gone = backend_gone(dsn, pid)
    return result


def _stream_postgres(conn, sql: str, row_cap: int, cap_cells: bool) -> ExecutionResult:
    collector = ResultCollector(row_cap)
    described = _describe(conn, sql) if cap_cells else None
    layout = None
    if described and any(oid not in SHORT_TYPE_OIDS for _, oid in described):
        sql, layout = capped_select(sql, described, collector.cell_cap)
    with conn.cursor() as cursor:
        # stream() sends one statement over the extended protocol (never two) in single-row
        # mode, so nothing holds the whole result; leaving it early cancels the rest.
        columns = None
        for row in cursor.stream(sql):
            if columns is None:
                columns = [d.name for d in cursor.description or []]
            if not collector.add(_unsplit(row, layout, collector) if layout else row):
                break
        if layout:
            columns = [name for name, _ in layout]
        elif columns is None:
            columns = [d.name for d in cursor.description or []]
    return collector.result(columns)


# --- the entry points --------------------------------------------------------------------


def warehouse_block_reason(warehouse: Warehouse) -> tuple[str | None, str]:
    """Return (why model SQL may not run on this warehouse or None, the checked login role).

    The check stored with the latest catalogue decides; a PostgreSQL warehouse never
    introspected is checked now.
    """
    if warehouse.dialect != Dialect.POSTGRES:
        return None, ""
    check = None
    if warehouse.pk is not None:
        catalogue = Catalogue.objects.filter(warehouse=warehouse).order_by("-version").only("role_check").first()
        check = catalogue.role_check if catalogue is not None else None
    if not check:
        try:
            check = live_role_check(warehouse_dsn(warehouse))
        except (psycopg.Error, WarehouseUnavailable):
            return None, ""  # the run itself reports the transport error
    return role_check_blocks(check), check.get("login_role", "")


# Checks of warehouses not yet introspected, by DSN: (monotonic time, check).
_LIVE_CHECKS: dict[str, tuple[float, dict]] = {}
LIVE_CHECK_TTL_S = 60.0


def live_role_check(dsn: str) -> dict:
    """Check a DSN's login role now, reusing this process's answer for a minute."""
    cached = _LIVE_CHECKS.get(dsn)
    if cached is not None and time.monotonic() - cached[0] < LIVE_CHECK_TTL_S:
        return cached[1]
    check = postgres_role_check(dsn).as_dict()
    _LIVE_CHECKS[dsn] = (time.monotonic(), check)
    return check


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
    blocked, login_role = warehouse_block_reason(warehouse)
    if blocked:
        return ExecutionResult(False, reason=blocked, error_code="unsafe_role", elapsed_ms=_ms_since(started))
    result = _execute(warehouse, sql, row_cap, timeout_s, login_role, cap_cells=True)
    result.elapsed_ms = _ms_since(started)
    return result


def execute_guarded(*, warehouse: Warehouse, sql: str, row_cap: int, timeout_s: float) -> ExecutionResult:
    """Run a text the caller has already guarded, under the database enforcement only.

    Only for texts built by Docket around a guarded query (the verifier's EXPLAIN); every
    other caller uses `run_readonly`. A warehouse whose role check fails runs nothing: the
    result is a transport error (a fault of the check, never a verdict on the SQL).
    """
    blocked, login_role = warehouse_block_reason(warehouse)
    if blocked:
        return ExecutionResult(True, error=f"transport: {blocked}", error_code="transport")
    return _execute(warehouse, sql, row_cap, timeout_s, login_role, cap_cells=False)


def _execute(warehouse, sql, row_cap, timeout_s, login_role, *, cap_cells: bool) -> ExecutionResult:
    try:
        dsn = warehouse_dsn(warehouse)
    except WarehouseUnavailable as exc:
        return ExecutionResult(True, error=f"transport: {exc}", error_code="transport")
    return execute_on_dsn(
        dialect=warehouse.dialect,
        dsn=dsn,
        sql=sql,
        row_cap=row_cap,
        timeout_s=timeout_s,
        expected_role=login_role,
        cap_cells=cap_cells,
    )


def execute_on_dsn(
    *,
    dialect: str,
    dsn: str,
    sql: str,
    row_cap: int,
    timeout_s: float,
    expected_role: str = "",
    cap_cells: bool = True,
) -> ExecutionResult:
    """Run a text under the database enforcement and the caps only (no guard, no role check).

    The layer below `run_readonly`; tests use it to show what holds without the guard.
    """
    try:
        if dialect == Dialect.POSTGRES:
            return _run_postgres(dsn, sql, row_cap, timeout_s, expected_role=expected_role, cap_cells=cap_cells)
        return _run_sqlite(dsn, sql, row_cap, timeout_s)
    except WarehouseUnavailable as exc:
        return ExecutionResult(True, error=f"transport: {exc}", error_code="transport")


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
