"""The process a SQLite warehouse query runs in: forked per query from a small fork server.

`probes.sqlite_runner` (the parent, in Docket's own process) starts one fork server per
process (`serve`, a fresh interpreter that imports only this module and `probes.results`).
For each query the parent hands the server one end of a new socket pair; the server forks a
child that reads the request from it, answers its pid, limits itself and runs the query:

- hard limits of its own process (`resource.setrlimit`): address space
  (`RLIMIT_AS`, `WAREHOUSE_SQLITE_PROCESS_MEMORY`) and CPU time (`RLIMIT_CPU`, just past the
  timeout), so a C function that never checks for interrupts cannot outlive its budget
  even if the parent were gone — the parent kills it at its deadline first;
- SQLite's own: `mode=ro`, `PRAGMA query_only`, an authorizer that permits only reads of
  the warehouse's tables (never `sqlite_master` and the other internals), length, SQL
  length, compound-SELECT, expression-depth and ATTACH limits, a heap limit, a printf that
  refuses widths past the length limit, and a progress handler at the deadline;
- rows are read one at a time into a `ResultCollector` (row, byte and cell caps), so what
  crosses back to the parent is the capped result (JSON, never pickle), never a raw batch.

Nothing here reads Django settings: the parent sends every limit with the request.
"""

import json
import os
import re
import resource
import signal
import socket
import sqlite3
import struct
import sys
import time
from dataclasses import asdict, dataclass
from urllib.parse import quote

from probes.results import ResultCollector

# SQLite authorizer: reads, SELECT and function calls only. Everything else (writes,
# ATTACH, PRAGMA, transactions, schema changes) is denied before it runs, and so are reads
# of SQLite's own tables (the schema, statistics, pragma and dbstat virtual tables).
_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
_INTERNAL_TABLE = re.compile(r"^(sqlite_|pragma_|dbstat$|sqlite_dbpage$)", re.IGNORECASE)
# Compound SELECTs and expression depth an analytical query stays far below.
SQLITE_MAX_COMPOUND_SELECT = 100
SQLITE_MAX_EXPR_DEPTH = 200
# CPU seconds past the timeout before the kernel stops the process (the parent kills it sooner).
CPU_SLACK_S = 2
_FRAME = struct.Struct("!I")


@dataclass(frozen=True)
class SqliteLimits:
    """Everything a query's process is held to, sent by the parent with the request."""

    max_length: int = 8_388_608
    heap_limit: int = 134_217_728
    max_sql_length: int = 69_632
    process_memory: int = 268_435_456
    byte_cap: int = 1_048_576
    cell_cap: int = 16_384


def authorize(action, arg1, arg2, db_name, trigger):
    """Permit reads of the warehouse's own tables, SELECT and allowed functions; deny the rest."""
    if action == sqlite3.SQLITE_FUNCTION:
        name = (arg2 or "").lower()
        return sqlite3.SQLITE_DENY if name in _DENIED_FUNCTIONS or name.startswith("sqlite_") else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_READ and _INTERNAL_TABLE.match(arg1 or ""):
        return sqlite3.SQLITE_DENY
    if action in _ALLOWED_ACTIONS or action == _RECURSIVE:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def apply_limits(conn: sqlite3.Connection, limits: SqliteLimits) -> None:
    """Cap what one statement may build: string/blob length, SQL length, shape, heap, printf."""
    # Process-wide, and the process is this query's own: it bounds nothing else.
    conn.execute(f"PRAGMA hard_heap_limit = {int(limits.heap_limit)}")
    # Sorts and temporary tables stay in memory, under the heap limit, never in temp files.
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limits.max_length)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, limits.max_sql_length)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, SQLITE_MAX_COMPOUND_SELECT)
    conn.setlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH, SQLITE_MAX_EXPR_DEPTH)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    printf = bounded_printf(limits.max_length)
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


def error_code(message: str) -> str:
    """Sort a SQLite error message into Docket's error codes."""
    lowered = message.lower()
    if "no such column" in lowered or "no such table" in lowered:
        return "unknown_object"
    if "no such function" in lowered or "wrong number of arguments" in lowered:
        return "dialect"
    if any(wrong in lowered for wrong in SQLITE_SQL_WRONG):
        return "dialect"
    if "syntax error" in lowered or "incomplete input" in lowered or "unrecognized token" in lowered:
        return "syntax"
    if "not authorized" in lowered or "prohibited" in lowered or "readonly" in lowered or "read-only" in lowered:
        return "refused_by_database"
    if "too big" in lowered or "too long" in lowered or "too many" in lowered or "too deep" in lowered:
        return "limit"
    if "out of memory" in lowered or "user-defined function raised exception" in lowered:
        return "limit"
    return "database_error"


def open_readonly(path: str, timeout_s: float) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=timeout_s, check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    return conn


def run_query(path: str, sql: str, row_cap: int, timeout_s: float, limits: SqliteLimits) -> dict:
    """Run one text on the file under every SQLite limit; return the answer the parent reads."""
    deadline = time.monotonic() + timeout_s
    state = {"timed_out": False}

    def past_deadline():
        if time.monotonic() > deadline:
            state["timed_out"] = True
            return 1
        return 0

    collector = ResultCollector(row_cap, byte_cap=limits.byte_cap, cell_cap=limits.cell_cap)
    conn = open_readonly(path, timeout_s)
    try:
        apply_limits(conn, limits)
        conn.set_authorizer(authorize)
        conn.set_progress_handler(past_deadline, 1000)
        try:
            cursor = conn.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            # One row at a time: a row is as wide as the length limit allows, a batch would not be.
            for row in cursor:
                if not collector.add(row):
                    break
        except (sqlite3.Error, sqlite3.Warning, OverflowError, MemoryError) as exc:
            if state["timed_out"]:
                message = f"timeout: statement exceeded {timeout_s:g}s"
                return {"error": message, "error_code": "timeout", "timed_out": True}
            message = str(exc) or type(exc).__name__
            code = error_code(message)
            if isinstance(exc, MemoryError):
                message, code = "out of memory: the query's process reached WAREHOUSE_SQLITE_PROCESS_MEMORY", "limit"
            elif "user-defined function raised exception" in message:
                message = f"refused by a limit: a printf width or precision over {limits.max_length} bytes"
            return {"error": message, "error_code": code}
        result = collector.result(columns)
        return {
            "executed": True,
            "columns": result.columns,
            "rows": result.rows,
            "truncated_by": result.truncated_by,
            "cells_truncated": result.cells_truncated,
            "result_bytes": result.result_bytes,
        }
    finally:
        conn.close()


# --- the wire: length-prefixed JSON frames ---------------------------------------------------


def send_frame(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message, default=str).encode()
    sock.sendall(_FRAME.pack(len(data)) + data)


def read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed the socket")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket, max_bytes: int) -> dict:
    (size,) = _FRAME.unpack(read_exactly(sock, _FRAME.size))
    if size > max_bytes:
        raise EOFError(f"a frame of {size} bytes, over {max_bytes}")
    return json.loads(read_exactly(sock, size))


# --- the child and the fork server -------------------------------------------------------------


def limit_process(timeout_s: float, memory: int) -> None:
    """Hold this process to `memory` bytes of address space and the timeout's CPU seconds (+ slack)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(timeout_s) + 1 + CPU_SLACK_S
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def child_main(sock: socket.socket) -> None:
    """Read one request, answer the pid, limit this process, run the query, answer the result."""
    request = recv_frame(sock, 1 << 24)
    send_frame(sock, {"pid": os.getpid()})
    limits = SqliteLimits(**request["limits"])
    try:
        limit_process(request["timeout_s"], limits.process_memory)
        answer = run_query(request["path"], request["sql"], request["row_cap"], request["timeout_s"], limits)
    except MemoryError:
        answer = {"error": "out of memory: the query's process reached its memory limit", "error_code": "limit"}
    send_frame(sock, answer)


def serve(control_fd: int) -> None:
    """Fork one child per socket the parent sends; stop when the parent goes away."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C for the parent is not for us
    control = socket.socket(fileno=control_fd)
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(control, 16, 1)
        except (OSError, EOFError):
            return
        if not message:
            return  # the parent closed its end: it has exited
        for fd in fds:
            if os.fork() == 0:
                control.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                code = 0
                try:
                    child_main(socket.socket(fileno=fd))
                except BaseException:  # noqa: BLE001 - the parent reads a lost child as a resource limit
                    code = 1
                os._exit(code)
            os.close(fd)


def limits_as_dict(limits: SqliteLimits) -> dict:
    return asdict(limits)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
