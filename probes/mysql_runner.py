"""Running SQL on a MySQL or MariaDB warehouse under the server's own enforcement and the caps (issue 34).

Every connection (`open_mysql`) fixes the `sql_mode` the guard read the text under (no
ANSI_QUOTES, no PIPES_AS_CONCAT, backslash escapes as the guard assumes — it refuses them
anyway), makes the session read-only (`SET SESSION TRANSACTION READ ONLY`) and gives it the
statement timeout (`max_statement_time` in seconds on MariaDB, `max_execution_time` in
milliseconds on MySQL); each text then runs in `START TRANSACTION READ ONLY`, always rolled
back. Rows stream (an unbuffered cursor) and stop at the row cap or the byte cap; a long cell
is cut by the `ResultCollector`. A query still running just after its timeout is killed from a
second connection (`KILL QUERY`) and checked gone from the process list.
"""

import threading
import time
from urllib.parse import unquote, urlparse

import pymysql
import pymysql.cursors

from probes.results import ExecutionResult, ResultCollector

# The server reads the text under this mode whatever its own default: `"` quotes a string and
# `||` is OR, as sqlglot's mysql dialect reads them.
SQL_MODE = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

# Server error numbers, by what they mean for the SQL.
SYNTAX_ERRORS = frozenset({1064, 1149})
UNKNOWN_OBJECT_ERRORS = frozenset({1046, 1049, 1054, 1109, 1146, 1305, 1356})
# Grouping, ambiguous names, wrong argument counts, type and window errors: the SQL is wrong.
DIALECT_ERRORS = frozenset(
    {1235, 1052, 1055, 1056, 1057, 1060, 1066, 1111, 1140, 1222, 1241, 1242, 1248, 1582, 3593, 4015}
)
TIMEOUT_ERRORS = frozenset({1317, 1969, 3024, 1205})  # interrupted, statement / execution time, lock wait
REFUSED_ERRORS = frozenset({1044, 1142, 1143, 1227, 1370, 1792, 1290, 1036})
LIMIT_ERRORS = frozenset({1104, 1114, 1038, 1041, 1153, 3170})
TRANSPORT_ERRORS = frozenset({1040, 1045, 1129, 1130, 1152, 1158, 1159, 1160, 1161, 2002, 2003, 2006, 2013, 2055})


def mysql_error_code(exc: Exception) -> str:
    number = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
    for numbers, code in (
        (SYNTAX_ERRORS, "syntax"),
        (UNKNOWN_OBJECT_ERRORS, "unknown_object"),
        (DIALECT_ERRORS, "dialect"),
        (TIMEOUT_ERRORS, "timeout"),
        (REFUSED_ERRORS, "refused_by_database"),
        (LIMIT_ERRORS, "limit"),
        (TRANSPORT_ERRORS, "transport"),
    ):
        if number in numbers:
            return code
    return "transport" if isinstance(exc, pymysql.OperationalError) and number >= 2000 else "database_error"


def _message(exc: Exception) -> str:
    if len(exc.args) >= 2:
        return f"({exc.args[0]}) {exc.args[1]}"
    return str(exc) or type(exc).__name__


def mysql_parameters(dsn: str) -> dict:
    """Read `mysql://user:password@host:port/database` (or `mariadb://`) into connect() arguments."""
    parts = urlparse(dsn)
    if parts.scheme not in ("mysql", "mariadb"):
        raise ValueError("a mysql warehouse DSN must look like mysql://user:password@host:3306/database")
    return {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or 3306,
        "user": unquote(parts.username or ""),
        "password": unquote(parts.password or ""),
        "database": unquote(parts.path.lstrip("/")) or None,
    }


def is_mariadb(conn) -> bool:
    return "mariadb" in conn.get_server_info().lower()


def timeout_statement(conn, timeout_s: float) -> str:
    if is_mariadb(conn):
        return f"SET SESSION max_statement_time = {max(0.001, float(timeout_s)):.3f}"
    return f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}"


def open_mysql(dsn: str, *, timeout_s: float, read_only: bool = True, cursorclass=pymysql.cursors.Cursor):
    """Open a connection whose session is read-only, time-limited and in Docket's sql_mode."""
    conn = pymysql.connect(
        **mysql_parameters(dsn),
        connect_timeout=max(2, int(timeout_s) + 1),
        read_timeout=max(5, int(timeout_s * 4) + 5),
        write_timeout=max(5, int(timeout_s * 4) + 5),
        autocommit=True,
        charset="utf8mb4",
        cursorclass=cursorclass,
        local_infile=False,
        client_flag=0,
    )
    with conn.cursor(pymysql.cursors.Cursor) as cursor:
        cursor.execute(f"SET SESSION sql_mode = '{SQL_MODE}'")
        cursor.execute(timeout_statement(conn, timeout_s))
        if read_only:
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
    return conn


class KillWatchdog:
    """Kill the connection's query from a second connection once its time is up (plus a grace)."""

    GRACE_S = 0.5

    def __init__(self, dsn: str, thread_id: int, timeout_s: float):
        self.dsn, self.thread_id, self.timeout_s = dsn, thread_id, timeout_s
        self.fired = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="docket-mysql-watchdog")

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join(timeout=5)

    def _watch(self):
        if self._done.wait(self.timeout_s + self.GRACE_S):
            return
        self.fired = True
        kill_query(self.dsn, self.thread_id)


def kill_query(dsn: str, thread_id: int) -> None:
    try:
        conn = pymysql.connect(**mysql_parameters(dsn), connect_timeout=5, autocommit=True)
    except pymysql.Error:
        return
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"KILL QUERY {int(thread_id)}")
    except pymysql.Error:
        pass  # already finished
    finally:
        conn.close()


def query_gone(dsn: str, thread_id: int, wait_s: float = 2.0) -> bool:
    """True once the connection runs no statement any more (its process-list row is idle or gone)."""
    deadline = time.monotonic() + wait_s
    try:
        conn = pymysql.connect(**mysql_parameters(dsn), connect_timeout=5, autocommit=True)
    except pymysql.Error:
        return False
    try:
        with conn.cursor() as cursor:
            while True:
                cursor.execute(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s AND COMMAND = 'Query'",
                    [int(thread_id)],
                )
                if cursor.fetchone()[0] == 0:
                    return True
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.05)
    except pymysql.Error:
        return False
    finally:
        conn.close()


def mysql_run(
    dsn: str, sql: str, row_cap: int, timeout_s: float, *, expected_role: str = "", cap_cells: bool = True
) -> ExecutionResult:
    """Run one text read-only under the session limits; the caps apply as rows arrive."""
    try:
        conn = open_mysql(dsn, timeout_s=timeout_s, cursorclass=pymysql.cursors.SSCursor)
    except pymysql.Error as exc:
        code = mysql_error_code(exc)
        return ExecutionResult(
            True, error=f"{code}: {_message(exc)}" if code == "transport" else _message(exc), error_code=code
        )
    if expected_role:
        with conn.cursor(pymysql.cursors.Cursor) as cursor:
            cursor.execute("SELECT CURRENT_USER()")
            login = cursor.fetchone()[0]
        if login != expected_role:
            conn.close()
            message = (
                f"refused: the DSN now logs in as {login!r}, not the checked login {expected_role!r}; "
                "run refresh_catalogue"
            )
            return ExecutionResult(False, reason=message, error=message, error_code="unsafe_role")
    thread_id = conn.thread_id()
    watchdog = KillWatchdog(dsn, thread_id, timeout_s)
    result = None
    try:
        with watchdog:
            result = _stream(conn, sql, row_cap, cap_cells)
    except pymysql.Error as exc:
        code = mysql_error_code(exc)
        if code == "timeout" or watchdog.fired:
            result = ExecutionResult(True, error=f"timeout: {_message(exc)}", timed_out=True, error_code="timeout")
        else:
            result = ExecutionResult(True, error=_message(exc), error_code=code)
    finally:
        _close_hard(conn)
    if result.timed_out or watchdog.fired:
        result.backend_gone = query_gone(dsn, thread_id)
    return result


def _stream(conn, sql: str, row_cap: int, cap_cells: bool) -> ExecutionResult:
    # Docket's own texts (the verifier's EXPLAIN) keep their cells whole, under the byte cap.
    collector = ResultCollector(row_cap) if cap_cells else ResultCollector(row_cap, cell_cap=1 << 40)
    cursor = conn.cursor()
    cursor.execute("START TRANSACTION READ ONLY")
    cursor.execute(sql)
    columns = [d[0] for d in cursor.description or []]
    while True:
        row = cursor.fetchone()
        if row is None or not collector.add(row):
            break
    return collector.result(columns)


def _close_hard(conn) -> None:
    """Close without reading what is left of an unbuffered result: the server drops the rest."""
    try:
        if conn.open:
            conn._force_close()  # noqa: SLF001 - close() would first read every remaining row
    except (pymysql.Error, OSError, AttributeError):
        pass
