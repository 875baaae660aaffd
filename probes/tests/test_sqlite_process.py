"""A SQLite warehouse query runs in a process of its own, under hard limits, killed at its deadline."""

import os
from pathlib import Path

from probes.execution import execute_on_dsn
from probes.sqlite_runner import fork_server, sqlite_run

# One call of instr() over an 8 MB string with a 30 KB needle (about 5 s on a quiet core; the
# test waits 0.55 s): SQLite's progress handler never runs inside it, so only killing its
# process can stop it at the deadline. A 3 KB needle took 0.4 s, too close to the kill.
UNINTERRUPTIBLE = "SELECT instr(printf('%.8000000c', 'a'), printf('%.30000c', 'a') || 'b')"


def run(warehouse, sql, timeout_s=2.0, row_cap=1000):
    return execute_on_dsn(
        dialect="sqlite", dsn=f"sqlite:///{warehouse.path}", sql=sql, row_cap=row_cap, timeout_s=timeout_s
    )


def test_a_query_inside_one_long_function_call_is_killed_at_its_deadline(shop_sqlite):
    result = run(shop_sqlite, UNINTERRUPTIBLE, timeout_s=0.05)
    assert not result.executed and result.timed_out and result.error_code == "timeout"
    assert "its process was killed" in result.error
    # The next query gets a fresh process: nothing of the killed one is left behind.
    assert run(shop_sqlite, "SELECT count(*) FROM orders").rows == [[4]]


def test_an_interruptible_query_stops_at_its_deadline_by_itself(shop_sqlite):
    forever = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    result = run(shop_sqlite, forever, timeout_s=0.2)
    assert result.timed_out and result.error_code == "timeout" and "killed" not in result.error


def test_the_process_memory_limit_stops_a_query_that_would_grow_past_it(shop_sqlite, settings):
    settings.WAREHOUSE_SQLITE_MAX_LENGTH = 400_000_000
    settings.WAREHOUSE_SQLITE_HEAP_LIMIT = 2**31
    settings.WAREHOUSE_SQLITE_PROCESS_MEMORY = 96 * 2**20
    grow = "'xx'"
    for _ in range(8):
        grow = f"replace({grow}, 'x', 'xxxxxxxxxx')"
    # Building 200 MB of string takes a second on a quiet core and several on a busy CI one:
    # the deadline is far enough away that only the memory limit can stop the first run.
    result = run(shop_sqlite, f"SELECT length({grow})", timeout_s=60)
    assert not result.executed and result.error_code in ("limit", "resource_limit"), result
    settings.WAREHOUSE_SQLITE_PROCESS_MEMORY = 2**30
    assert run(shop_sqlite, f"SELECT length({grow})", timeout_s=60).rows == [[200_000_000]]


def test_wide_rows_within_the_row_cap_come_back_capped_not_as_a_batch(shop_sqlite, settings):
    settings.WAREHOUSE_SQLITE_PROCESS_MEMORY = 128 * 2**20
    wide = "SELECT hex(zeroblob(2000000)) AS x FROM orders a, orders b, orders c"  # 64 rows of 4 MB
    result = run(shop_sqlite, wide)
    assert result.executed and result.truncated_by == "byte_cap"
    assert result.result_bytes <= settings.WAREHOUSE_RESULT_MAX_BYTES
    assert all("[cut: 4000000 bytes" in row[0] for row in result.rows)


def test_sqlite_internals_are_refused_by_the_database_even_without_the_guard(shop_sqlite):
    for internal in (
        "SELECT sql FROM sqlite_master",
        "SELECT name FROM main.sqlite_schema",
        "SELECT * FROM pragma_table_info('orders')",
        "SELECT sqlite_version()",
    ):
        result = run(shop_sqlite, internal)
        assert not result.executed and result.error_code == "refused_by_database", (internal, result.error)


def test_the_query_process_holds_none_of_dockets_secrets(shop_sqlite, monkeypatch):
    monkeypatch.setenv("DOCKET_TEST_SECRET", "not-for-the-sql-process")
    sqlite_run(f"sqlite:///{shop_sqlite.path}", "SELECT 1", 1, 2.0)
    server = fork_server()
    environment = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
    assert not [entry for entry in environment if entry.startswith((b"DOCKET_", b"DATABASE_URL", b"WAREHOUSE_"))]
    assert server.process.pid != os.getpid()
