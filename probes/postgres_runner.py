"""Running SQL on a PostgreSQL warehouse under the database's own enforcement and the caps.

A read-only transaction that is always rolled back, statement, lock and idle timeouts and
planner limits (`join_collapse_limit`, `from_collapse_limit`, `geqo_threshold`) set when
connecting (`probes.warehouses.open_postgres`), no `SET ROLE` (a role set inside a session
can be unset inside it). Rows stream (single-row mode) and stop at the row cap or the byte
cap; a cell longer than the cell cap is cut on the server before it is sent
(`capped_select`). A query still running just after its timeout is cancelled and then
terminated (`probes.postgres_cancel`); a timed-out query's backend is checked gone.
"""

import psycopg
from psycopg import pq

from probes.postgres_cancel import Watchdog, backend_gone
from probes.results import ExecutionResult, ResultCollector, truncation_mark
from probes.warehouses import open_postgres

# Errors of class 42 that mean the SQL itself is wrong (probes.outcome reads "dialect" as a
# failure of the SQL; an unlisted SQLSTATE is a fault of the check): grouping error,
# ambiguous column, alias or parameter, invalid column reference, duplicate alias, windowing
# and recursion errors, indeterminate datatype or collation, collation mismatch, wrong object type.
SQL_WRONG_SQLSTATES = frozenset(
    {"42803", "42702", "42P09", "42P08", "42P10", "42712", "42P20", "42P19", "42P18", "42P22", "42P21", "42809"}
)


def _postgres_error_code(exc) -> str:
    sqlstate = getattr(exc, "sqlstate", None) or ""
    if sqlstate in ("57014",):
        return "timeout"
    if sqlstate in ("55P03",):
        return "timeout"  # lock_timeout: the probe waited for a lock; give up as a timeout
    if sqlstate in ("42703", "42P01", "42704", "3F000", "42P02"):
        return "unknown_object"
    if sqlstate in ("42883", "42725", "42804", "42846", "22P02") or sqlstate in SQL_WRONG_SQLSTATES:
        return "dialect"
    if sqlstate in ("42601",):
        return "syntax"
    if sqlstate in ("25006", "42501"):
        return "refused_by_database"
    if sqlstate in ("54000", "54001", "53200", "53400"):  # 53400: temp_file_limit
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
    `"<octet length>:<first characters>"` when long (NULL otherwise). Its text form is made
    once per row, in a layer of its own (`docket_t`), and only measured and cut above it.
    Returns the text and, per original column, (name, was split).
    """
    body = sql.strip().rstrip(";").rstrip()
    aliases = [f"c{i}" for i in range(len(described))]
    inner, select, layout = [], [], []
    for alias, (name, oid) in zip(aliases, described, strict=True):
        inner.append(f"docket_q.{alias}")
        if oid in SHORT_TYPE_OIDS:
            select.append(f"docket_t.{alias}")
            layout.append((name, False))
            continue
        inner.append(f"docket_q.{alias}::text AS {alias}_text")
        text = f"docket_t.{alias}_text"
        too_long = f"octet_length({text}) > {int(cell_cap)}"
        select.append(f"CASE WHEN {too_long} THEN NULL ELSE docket_t.{alias} END")
        select.append(
            f"CASE WHEN {too_long} THEN octet_length({text})::text || ':' || left({text}, {int(cell_cap)}) END"
        )
        layout.append((name, True))
    # OFFSET 0 keeps each layer from being flattened into the next, so each value (and its
    # text form) is computed once per row, not once per reference.
    query = f"SELECT * FROM (\n{body}\n) AS docket_b OFFSET 0"
    texts = f"SELECT {', '.join(inner)} FROM ({query}) AS docket_q({', '.join(aliases)}) OFFSET 0"
    wrapped = f"SELECT {', '.join(select)} FROM ({texts}) AS docket_t"
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
            value = truncation_mark(encoded.decode(errors="ignore"), int(length), collector.cell_cap)
        values.append(value)
    return values


def postgres_run(
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
