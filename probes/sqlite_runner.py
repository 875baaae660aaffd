"""Running SQL on a SQLite warehouse: in a process of its own, killed at its deadline.

SQLite runs inside the process that calls it, so a function that never checks for
interrupts (a `printf` width, `replace` or `instr` over long strings, LIKE over a long
literal) would hold Docket's own process past any timeout, and a batch of wide rows would
grow it. So each query runs in a child forked from a small fork server
(`probes.sqlite_worker`) under hard limits of its own (address space, CPU time) and every
SQLite limit; the parent waits for the capped answer until the timeout plus `KILL_GRACE_S`,
and kills the child if it has not answered. Only the capped result (rows, bytes and cells
bounded in the child) crosses back.

Forking per query costs about 3.6 ms (median of 100 small queries on the 2-core test
machine at load 2; 10-25 ms when it is saturated); the fork server itself is started once
per process, lazily, and again after a fork of this process.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from django.conf import settings

from probes.results import ExecutionResult
from probes.sqlite_worker import SqliteLimits, apply_limits, limits_as_dict, recv_frame, send_frame
from probes.warehouses import WarehouseUnavailable, sqlite_path

# Room for what Docket wraps around a guarded text (the verifier's EXPLAIN QUERY PLAN).
SQL_LENGTH_SLACK = 4096
# How long past its timeout a query's process may take to answer before it is killed.
KILL_GRACE_S = 0.5
# A child that does not even answer its pid in this long is lost (the machine is overloaded).
START_WAIT_S = 10.0
ROOT = Path(__file__).resolve().parents[1]


def current_sqlite_limits() -> SqliteLimits:
    """The limits from settings, for a query's own process (which reads no settings)."""
    return SqliteLimits(
        max_length=int(settings.WAREHOUSE_SQLITE_MAX_LENGTH),
        heap_limit=int(settings.WAREHOUSE_SQLITE_HEAP_LIMIT),
        max_sql_length=int(getattr(settings, "WAREHOUSE_MAX_SQL_BYTES", 65_536)) + SQL_LENGTH_SLACK,
        process_memory=int(settings.WAREHOUSE_SQLITE_PROCESS_MEMORY),
        byte_cap=int(settings.WAREHOUSE_RESULT_MAX_BYTES),
        cell_cap=int(settings.WAREHOUSE_CELL_MAX_BYTES),
    )


def limit_sqlite(conn) -> None:
    """Put the SQLite limits from settings on a connection (what a query's process does first)."""
    apply_limits(conn, current_sqlite_limits())


class ForkServer:
    """The fork server of this process: `probes.sqlite_worker.serve` over a control socket."""

    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        code = (
            f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
            f"from probes.sqlite_worker import serve; serve({theirs.fileno()})"
        )
        # A clean environment: the process that runs model SQL holds none of Docket's secrets.
        environment = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", code],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=environment,
            close_fds=True,
        )
        theirs.close()
        self.control = ours
        self.owner = os.getpid()
        self.lock = threading.Lock()

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def start_child(self) -> socket.socket:
        """Hand the server one end of a new socket pair; return the end the child answers on."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self.lock:
                socket.send_fds(self.control, [b"q"], [theirs.fileno()])
        finally:
            theirs.close()
        return ours


_server: ForkServer | None = None
_server_lock = threading.Lock()


def fork_server() -> ForkServer:
    """This process's fork server, started on first use (and again if it died or we forked)."""
    global _server
    with _server_lock:
        if _server is None or not _server.alive():
            _server = ForkServer()
        return _server


def _start_child() -> socket.socket:
    try:
        return fork_server().start_child()
    except OSError:
        # The server died between the check and the send: start a new one once.
        with _server_lock:
            global _server
            _server = None
        return fork_server().start_child()


def sqlite_run(dsn: str, sql: str, row_cap: int, timeout_s: float) -> ExecutionResult:
    """Run one text in a process of its own; kill it if it has not answered by its deadline."""
    path = sqlite_path(dsn)
    if not Path(path).exists():
        raise WarehouseUnavailable("the sqlite warehouse file does not exist")
    limits = current_sqlite_limits()
    request = {"path": path, "sql": sql, "row_cap": row_cap, "timeout_s": timeout_s, "limits": limits_as_dict(limits)}
    sock = _start_child()
    pid, answer, late = None, None, False
    try:
        sock.settimeout(START_WAIT_S)
        send_frame(sock, request)
        pid = recv_frame(sock, 1024)["pid"]
        sock.settimeout(timeout_s + KILL_GRACE_S)
        # The answer is the capped result plus its JSON wrapping: never much over the byte cap.
        answer = recv_frame(sock, 4 * limits.byte_cap + (1 << 20))
    except TimeoutError:
        late = True
    except (OSError, EOFError, ValueError):
        pass  # the child ended without an answer
    finally:
        sock.close()
        if answer is None and pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    if answer is None:
        return _unanswered(late, timeout_s)
    if answer.get("executed"):
        result = ExecutionResult(True, executed=True, columns=answer["columns"], rows=answer["rows"])
        result.truncated_by = answer.get("truncated_by")
        result.truncated = result.truncated_by is not None
        result.cells_truncated = answer.get("cells_truncated", 0)
        result.result_bytes = answer.get("result_bytes", 0)
        return result
    return ExecutionResult(
        True, error=answer.get("error"), error_code=answer.get("error_code"), timed_out=bool(answer.get("timed_out"))
    )


def _unanswered(late: bool, timeout_s: float) -> ExecutionResult:
    """The result of a child that gave no answer: killed at its deadline, or ended by a hard limit."""
    if late:
        message = f"timeout: statement exceeded {timeout_s:g}s (its process was killed)"
        return ExecutionResult(True, error=message, timed_out=True, error_code="timeout")
    return ExecutionResult(
        True,
        error="resource_limit: the query's process ended without an answer (a memory or CPU limit of its process)",
        error_code="resource_limit",
    )
