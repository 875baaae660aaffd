"""Caps during execution: SQLite limits, row/byte/cell caps on both databases, the cancel watchdog."""

import sqlite3

import psycopg
import pytest

from probes.execution import execute_on_dsn
from probes.postgres_cancel import Watchdog, backend_gone
from probes.postgres_runner import capped_select
from probes.sqlite_runner import limit_sqlite
from probes.sqlite_worker import SQLITE_MAX_COMPOUND_SELECT, SQLITE_MAX_EXPR_DEPTH
from probes.warehouses import open_postgres


def test_sqlite_connections_carry_the_length_shape_and_attach_limits(tmp_path, settings):
    settings.WAREHOUSE_SQLITE_MAX_LENGTH = 1_000_000
    conn = sqlite3.connect(tmp_path / "x.sqlite3")
    limit_sqlite(conn)
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 1_000_000
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED) == 0
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT) == SQLITE_MAX_COMPOUND_SELECT
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH) == SQLITE_MAX_EXPR_DEPTH
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH) <= settings.WAREHOUSE_MAX_SQL_BYTES + 4096
    conn.close()


def test_a_sqlite_memory_bomb_stops_at_the_length_limit(shop_sqlite, settings):
    settings.WAREHOUSE_SQLITE_MAX_LENGTH = 1_000_000
    for bomb in ("SELECT length(zeroblob(500000000))", "SELECT length(randomblob(2000000))"):
        result = sqlite_dsn_run(shop_sqlite, bomb)
        assert not result.executed and result.error_code == "limit", bomb
        assert "too big" in result.error


def sqlite_dsn_run(warehouse, sql, row_cap=1000):
    return execute_on_dsn(dialect="sqlite", dsn=f"sqlite:///{warehouse.path}", sql=sql, row_cap=row_cap, timeout_s=2)


def test_a_result_stops_at_the_byte_cap_before_the_row_cap(shop_sqlite, settings):
    settings.WAREHOUSE_RESULT_MAX_BYTES = 50_000
    many = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 5000) "
        "SELECT n, printf('%.1000c', 'x') FROM r"
    )
    result = sqlite_dsn_run(shop_sqlite, many, row_cap=5000)
    assert result.executed and result.truncated and result.truncated_by == "byte_cap"
    assert 40 <= len(result.rows) <= 50, len(result.rows)
    assert result.result_bytes <= 50_000
    assert [row[0] for row in result.rows] == list(range(1, len(result.rows) + 1))


def test_a_long_sqlite_cell_is_cut_and_marked(shop_sqlite, settings):
    settings.WAREHOUSE_CELL_MAX_BYTES = 100
    result = sqlite_dsn_run(shop_sqlite, "SELECT printf('%.5000c', 'y') AS long, 'short' AS short")
    long, short = result.rows[0]
    assert long.startswith("y" * 100) and not long.startswith("y" * 101)
    assert "[cut: 5000 bytes, first 100 kept]" in long
    assert short == "short" and result.cells_truncated == 1


def pg_run(warehouse, sql, row_cap=1000, timeout_s=2.0):
    return execute_on_dsn(dialect="postgres", dsn=warehouse.reader_dsn, sql=sql, row_cap=row_cap, timeout_s=timeout_s)


def test_a_long_postgres_cell_is_cut_on_the_server_and_short_values_keep_their_types(shop_postgres, settings):
    settings.WAREHOUSE_CELL_MAX_BYTES = 100
    result = pg_run(
        shop_postgres,
        "SELECT repeat('z', 3000000) AS long, ARRAY[1, 2] AS arr, '{\"a\": 1}'::jsonb AS doc, "
        "'abc'::text AS short, 7 AS n, order_id AS id FROM orders ORDER BY order_id LIMIT 2",
    )
    assert result.executed, result.error
    assert result.columns == ["long", "arr", "doc", "short", "n", "id"]
    first = result.rows[0]
    assert first[0].startswith("z" * 100) and "[cut: 3000000 bytes, first 100 kept]" in first[0]
    assert first[1:] == [[1, 2], {"a": 1}, "abc", 7, 10]
    assert result.cells_truncated == 2 and [row[5] for row in result.rows] == [10, 11]
    assert result.result_bytes < 1000


def test_a_postgres_result_streams_and_stops_at_the_byte_cap(shop_postgres, settings):
    settings.WAREHOUSE_RESULT_MAX_BYTES = 20_000
    result = pg_run(shop_postgres, "SELECT n, repeat('x', 1000) FROM generate_series(1, 200000) AS n", 10**6)
    assert result.executed and result.truncated_by == "byte_cap"
    assert [row[0] for row in result.rows] == list(range(1, len(result.rows) + 1))
    assert 15 <= len(result.rows) <= 20


def test_postgres_duplicate_column_names_survive_the_cell_cap(shop_postgres):
    result = pg_run(
        shop_postgres,
        "SELECT o.order_id, i.order_id, 'x' || o.order_id AS t FROM orders o "
        "JOIN order_items i ON i.order_id = o.order_id ORDER BY 1 LIMIT 1",
    )
    assert result.columns == ["order_id", "order_id", "t"] and result.rows == [[10, 10, "x10"]]


def test_postgres_model_sql_runs_with_planner_limits(shop_postgres, settings):
    settings.WAREHOUSE_PG_COLLAPSE_LIMIT = 3
    settings.WAREHOUSE_PG_GEQO_THRESHOLD = 4
    result = pg_run(
        shop_postgres,
        "SELECT current_setting('join_collapse_limit'), current_setting('from_collapse_limit'), "
        "current_setting('geqo_threshold')",
    )
    assert result.rows == [["3", "3", "4"]]


def test_postgres_two_statements_never_run(shop_postgres):
    result = pg_run(shop_postgres, "SELECT 1; SELECT 2")
    assert not result.executed and "multiple commands" in result.error


def test_a_timed_out_postgres_query_is_cancelled_and_its_backend_is_gone(shop_postgres):
    result = pg_run(shop_postgres, "SELECT pg_sleep(10)", timeout_s=0.5)
    assert result.timed_out and result.error_code == "timeout"
    assert result.backend_gone is True


def test_the_watchdog_cancels_from_a_second_connection_when_the_server_does_not(shop_postgres):

    conn = open_postgres(shop_postgres.reader_dsn, timeout_s=60)  # the server's own timeout is far off
    pid = conn.info.backend_pid
    watchdog = Watchdog(conn, shop_postgres.reader_dsn, 0.2)
    with pytest.raises(psycopg.errors.QueryCanceled), watchdog:
        conn.execute("SELECT pg_sleep(30)")
    assert watchdog.fired
    conn.close()
    assert backend_gone(shop_postgres.reader_dsn, pid)


def test_sqlite_printf_keeps_its_meaning_but_refuses_widths_past_the_length_limit(shop_sqlite, settings):
    settings.WAREHOUSE_SQLITE_MAX_LENGTH = 1_000_000
    same = sqlite_dsn_run(shop_sqlite, "SELECT printf('%5.2f|%-4d|%s|%.*c', 3.14159, 7, 'a', 3, 'x'), format('%d', 1)")
    assert same.rows == [[" 3.14|7   |a|xxx", "1"]]
    for wide in ("SELECT printf('%.*c', 2000000000, 'x')", "SELECT printf('%2000000000c', 'x')"):
        refused = sqlite_dsn_run(shop_sqlite, wide)
        assert not refused.executed and refused.error_code == "limit", wide
        assert "printf width or precision over 1000000 bytes" in refused.error


def test_the_cell_cap_wrapper_makes_each_long_cell_text_once():
    wrapped, layout = capped_select("SELECT a, b, n FROM t", [("a", 25), ("b", 3802), ("n", 23)], 100)
    assert wrapped.count("docket_q.c0::text") == 1 and wrapped.count("docket_q.c1::text") == 1
    assert "c2::text" not in wrapped and layout == [("a", True), ("b", True), ("n", False)]
