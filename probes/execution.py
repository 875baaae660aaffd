"""The one path by which Docket runs SQL against a warehouse.

Probes, result previews, `run_sql` and the verifier's EXPLAIN all come through here, in
this order: the guard (`probes.guard`) → the role check (a PostgreSQL warehouse whose
login role can do more than read runs nothing, `probes.role_check`) → the database's own
enforcement → caps during execution.

The database's enforcement and the caps live with each database's runner:
`probes.postgres_runner` (with `probes.postgres_cancel`) and `probes.sqlite_runner`; the
result contract and the caps on what comes back are in `probes.results`.
"""

import time

import psycopg
import pymysql
from django.conf import settings

from probes.duckdb_runner import duckdb_run
from probes.guard import guard_sql
from probes.models import Catalogue, Dialect, Warehouse
from probes.mysql_runner import mysql_run
from probes.postgres_runner import postgres_run
from probes.results import ExecutionResult
from probes.role_check import role_check_blocks
from probes.sqlite_runner import sqlite_run
from probes.warehouses import ROLE_CHECKED, WarehouseUnavailable, login_role_check, warehouse_dsn


def warehouse_block_reason(warehouse: Warehouse) -> tuple[str | None, str]:
    """Return (why model SQL may not run on this warehouse or None, the checked login role).

    The check stored with the latest catalogue decides; a PostgreSQL warehouse never
    introspected is checked now.
    """
    if warehouse.dialect not in ROLE_CHECKED:
        return None, ""
    check = None
    if warehouse.pk is not None:
        catalogue = Catalogue.objects.filter(warehouse=warehouse).order_by("-version").only("role_check").first()
        check = catalogue.role_check if catalogue is not None else None
    if not check:
        try:
            check = live_role_check(warehouse_dsn(warehouse), warehouse.dialect)
        except (psycopg.Error, pymysql.Error, WarehouseUnavailable):
            return None, ""  # the run itself reports the transport error
    return role_check_blocks(check), check.get("login_role", "")


# Checks of warehouses not yet introspected, by DSN: (monotonic time, check).
_LIVE_CHECKS: dict[str, tuple[float, dict]] = {}
LIVE_CHECK_TTL_S = 60.0


def live_role_check(dsn: str, dialect: str = Dialect.POSTGRES) -> dict:
    """Check a DSN's login role now, reusing this process's answer for a minute."""
    cached = _LIVE_CHECKS.get(dsn)
    if cached is not None and time.monotonic() - cached[0] < LIVE_CHECK_TTL_S:
        return cached[1]
    check = login_role_check(dialect, dsn).as_dict()
    _LIVE_CHECKS[dsn] = (time.monotonic(), check)
    return check


NO_CONNECTION_MESSAGE = "no connection: the warehouse's catalogue comes from a file (import_catalogue)"


def no_connection_result() -> ExecutionResult:
    """What every run on a warehouse without a connection returns: a fault, never a verdict."""
    return ExecutionResult(True, error=NO_CONNECTION_MESSAGE, error_code="no_connection")


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
    if not warehouse.has_connection:
        return no_connection_result()
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
    if not warehouse.has_connection:
        return no_connection_result()
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
            return postgres_run(dsn, sql, row_cap, timeout_s, expected_role=expected_role, cap_cells=cap_cells)
        if dialect == Dialect.MYSQL:
            return mysql_run(dsn, sql, row_cap, timeout_s, expected_role=expected_role, cap_cells=cap_cells)
        if dialect == Dialect.SQLITE:
            return sqlite_run(dsn, sql, row_cap, timeout_s)
        if dialect == Dialect.DUCKDB:
            return duckdb_run(dsn, sql, row_cap, timeout_s, cap_cells=cap_cells)
        return ExecutionResult(
            True, error=f"transport: Docket runs nothing on a {dialect} warehouse yet", error_code="transport"
        )
    except WarehouseUnavailable as exc:
        return ExecutionResult(True, error=f"transport: {exc}", error_code="transport")


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
