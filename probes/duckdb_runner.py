"""Running SQL on a DuckDB warehouse file (issue 34): read-only, no files, no network, fixed limits.

`open_duckdb` opens the file `read_only` with `enable_external_access=false` (no file,
extension or network access: `read_csv`, `COPY`, `ATTACH`, `INSTALL` fail in the engine),
`autoload_known_extensions`/`autoinstall_known_extensions` off, `memory_limit` and `threads`
from settings, and `lock_configuration=true` last, so no statement can change any of them.
A query past its time is interrupted (`interrupt()` from a timer thread); rows stream and stop
at the row cap or the byte cap; a long cell is cut by the `ResultCollector`.
"""

import threading
from pathlib import Path
from urllib.parse import unquote

import duckdb
from django.conf import settings

from probes.results import ExecutionResult, ResultCollector


class DuckdbUnavailable(Exception):
    """The DSN names no DuckDB file."""


def duckdb_path(dsn: str) -> str:
    if not dsn.startswith("duckdb:///"):
        raise DuckdbUnavailable("a duckdb warehouse DSN must look like duckdb:////absolute/path.duckdb")
    return unquote(dsn[len("duckdb:///") :].split("?", 1)[0])


def open_duckdb(dsn: str):
    path = duckdb_path(dsn)
    if not Path(path).exists():
        raise DuckdbUnavailable("the duckdb warehouse file does not exist")
    return duckdb.connect(
        path,
        read_only=True,
        config={
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "memory_limit": f"{int(settings.WAREHOUSE_DUCKDB_MEMORY_LIMIT_MB)}MB",
            "threads": int(settings.WAREHOUSE_DUCKDB_THREADS),
            "lock_configuration": True,
        },
    )


def duckdb_error_code(exc: Exception) -> str:
    if isinstance(exc, duckdb.ParserException):
        return "syntax"
    if isinstance(exc, (duckdb.CatalogException, duckdb.BinderException)):
        unknown = ("does not exist", "not found", "does not have a column")
        return "unknown_object" if any(text in str(exc) for text in unknown) else "dialect"
    if isinstance(exc, duckdb.InterruptException):
        return "timeout"
    if isinstance(exc, duckdb.OutOfMemoryException):
        return "limit"
    if isinstance(exc, duckdb.PermissionException | duckdb.InvalidInputException):
        return "refused_by_database"
    if isinstance(exc, duckdb.IOException):
        return "transport"
    return "database_error"


def duckdb_run(dsn: str, sql: str, row_cap: int, timeout_s: float, *, cap_cells: bool = True) -> ExecutionResult:
    try:
        conn = open_duckdb(dsn)
    except DuckdbUnavailable as exc:
        return ExecutionResult(True, error=f"transport: {exc}", error_code="transport")
    except duckdb.Error as exc:
        return ExecutionResult(True, error=f"transport: {str(exc).splitlines()[0]}", error_code="transport")
    fired = threading.Event()

    def interrupt():
        fired.set()
        conn.interrupt()

    timer = threading.Timer(timeout_s, interrupt)
    timer.daemon = True
    collector = ResultCollector(row_cap) if cap_cells else ResultCollector(row_cap, cell_cap=1 << 40)
    try:
        timer.start()
        cursor = conn.execute(sql)
        columns = [d[0] for d in cursor.description or []]
        while True:
            batch = cursor.fetchmany(256)
            if not batch or not all(collector.add(row) for row in batch):
                break
        return collector.result(columns)
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if fired.is_set() or isinstance(exc, duckdb.InterruptException):
            return ExecutionResult(
                True, error=f"timeout: {message}", timed_out=True, error_code="timeout", backend_gone=True
            )
        return ExecutionResult(True, error=message, error_code=duckdb_error_code(exc))
    finally:
        timer.cancel()
        conn.close()
