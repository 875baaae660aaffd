"""Stopping a PostgreSQL statement that outlives its timeout, and checking it is gone.

The server's own `statement_timeout` is the first stop; these are the next ones, for a
statement the server does not stop in time (or a server that ignores the setting).
"""

import contextlib
import threading
import time

import psycopg


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
