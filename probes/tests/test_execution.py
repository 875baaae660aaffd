"""run_readonly: the row cap, the JSON contract, DB enforcement and faults."""

import io
import json
import os
import sqlite3
import stat

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from probes.demo_warehouse import reader_dsn
from probes.execution import execute_on_dsn, run_readonly
from probes.models import Warehouse
from probes.postgres_cancel import Watchdog, backend_gone
from probes.role_check import UnsafeWarehouseRole
from probes.selectors import catalogue_get_latest
from probes.sqlite_runner import SQLITE_MAX_COMPOUND_SELECT, SQLITE_MAX_EXPR_DEPTH, limit_sqlite
from probes.tests.conftest import unique_name
from probes.warehouses import dsn_env_var, open_postgres, warehouse_register


def test_a_select_returns_columns_and_rows(shop_sqlite):
    result = run_readonly(warehouse=shop_sqlite, sql="SELECT order_id, total FROM orders ORDER BY order_id")
    assert result.allowed and result.executed and result.error is None
    assert result.columns == ["order_id", "total"]
    assert result.rows == [[10, 30], [11, 5], [12, 12], [13, 7]]


def test_the_row_cap_limits_what_is_fetched(shop_sqlite):
    result = run_readonly(warehouse=shop_sqlite, sql="SELECT * FROM order_items", row_cap=2)
    assert len(result.rows) == 2
    assert result.truncated


def test_the_row_cap_defaults_to_the_setting(shop_sqlite, settings):
    settings.WAREHOUSE_ROW_CAP = 3
    assert len(run_readonly(warehouse=shop_sqlite, sql="SELECT * FROM order_items").rows) == 3


def test_a_refusal_carries_the_guard_reason_and_runs_nothing(shop_sqlite):
    result = run_readonly(warehouse=shop_sqlite, sql="DELETE FROM orders")
    assert not result.allowed and not result.executed
    assert result.reason == "only a query may run; this is DELETE"


def test_sqlite_is_opened_read_only_even_if_the_guard_were_bypassed(shop_sqlite):
    from probes.execution import execute_guarded

    result = execute_guarded(warehouse=shop_sqlite, sql="DELETE FROM orders", row_cap=10, timeout_s=1)
    assert not result.executed
    assert "not authorized" in result.error
    count = sqlite3.connect(shop_sqlite.path).execute("SELECT count(*) FROM orders").fetchone()[0]
    assert count == 4


def test_postgres_runs_in_a_read_only_transaction_even_if_the_guard_were_bypassed(shop_postgres):
    from probes.execution import execute_guarded

    result = execute_guarded(warehouse=shop_postgres, sql="DELETE FROM shipments", row_cap=10, timeout_s=1)
    assert not result.executed
    assert "read-only transaction" in result.error
    settings_seen = execute_guarded(
        warehouse=shop_postgres,
        sql="SELECT current_setting('transaction_read_only'), current_setting('statement_timeout'), "
        "current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout')",
        row_cap=1,
        timeout_s=2,
    )
    assert settings_seen.rows == [["on", "2s", "2s", "4s"]]


def test_postgres_values_become_json(shop_postgres):
    result = run_readonly(
        warehouse=shop_postgres, sql="SELECT total, DATE '2026-01-02' AS d, NULL AS n FROM orders WHERE order_id = 10"
    )
    assert result.rows == [[30.0, "2026-01-02", None]]
    json.dumps(result.as_dict())


def test_a_missing_dsn_is_a_transport_error_not_a_refusal(db):
    warehouse = Warehouse.objects.create(name="nowhere", dialect="sqlite")
    result = run_readonly(warehouse=warehouse, sql="SELECT 1")
    assert result.allowed and not result.executed
    assert result.error_code == "transport"
    assert "WAREHOUSE_NOWHERE_URL" in result.error


def test_an_unreachable_postgres_is_a_transport_error(db, monkeypatch):
    monkeypatch.setenv("WAREHOUSE_GONE_URL", "postgresql://postgres@127.0.0.1:1/nothing")
    warehouse = Warehouse.objects.create(name="gone", dialect="postgres")
    result = run_readonly(warehouse=warehouse, sql="SELECT 1", timeout_s=1)
    assert result.error_code == "transport"
    assert result.error.startswith("transport:")


def test_run_sql_prints_the_json_contract(shop_sqlite, tmp_path):
    path = tmp_path / "q.sql"
    path.write_text("SELECT name FROM customers ORDER BY customer_id")
    out = io.StringIO()
    call_command("run_sql", "--warehouse", "shop", "--sql-file", str(path), "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert list(data) == ["allowed", "reason", "executed", "rows", "columns", "elapsed_ms", "error"]
    assert data["rows"] == [["Ada"], ["Bo"], ["Cy"]]
    assert data["columns"] == ["name"] and data["allowed"] and data["executed"] and data["error"] is None


def test_run_sql_names_an_unknown_warehouse(db, tmp_path):
    path = tmp_path / "q.sql"
    path.write_text("SELECT 1")
    with pytest.raises(CommandError, match="unknown warehouse 'nope'"):
        call_command("run_sql", "--warehouse", "nope", "--sql-file", str(path))


def test_the_dsn_comes_from_the_environment_first(db, monkeypatch, settings, tmp_path):
    from probes.warehouses import warehouse_dsn

    settings.WAREHOUSES_FILE.write_text(json.dumps({"my-wh": "sqlite:////from/file.sqlite3"}))
    warehouse = Warehouse.objects.create(name="my-wh", dialect="sqlite")
    assert warehouse_dsn(warehouse) == "sqlite:////from/file.sqlite3"
    monkeypatch.setenv("WAREHOUSE_MY_WH_URL", "sqlite:////from/env.sqlite3")
    assert warehouse_dsn(warehouse) == "sqlite:////from/env.sqlite3"


def test_registering_with_a_dsn_writes_the_secrets_file_never_the_database(db, settings):
    secret = "postgresql://reader:s3cret-pw@db.internal:5432/wh"
    warehouse = warehouse_register(name="sales", dialect="postgres", dsn=secret, description="Sales")
    stored = json.dumps(list(Warehouse.objects.filter(pk=warehouse.pk).values()), default=str)
    assert "s3cret" not in stored
    assert json.loads(settings.WAREHOUSES_FILE.read_text()) == {"sales": secret}
    assert settings.WAREHOUSES_FILE.stat().st_mode & 0o777 == 0o600


def test_registering_refuses_a_dsn_of_the_wrong_dialect(db):
    from probes.warehouses import WarehouseUnavailable

    with pytest.raises(WarehouseUnavailable, match="needs a sqlite:// DSN"):
        warehouse_register(name="x", dialect="sqlite", dsn="postgresql://a@b/c")
    assert not Warehouse.objects.filter(name="x").exists()


# --- the secrets file --------------------------------------------------------------------


def test_the_secrets_file_is_owner_only_even_under_a_permissive_umask_and_an_open_old_file(db, settings):
    settings.WAREHOUSES_FILE.write_text(json.dumps({"old": "sqlite:////old.sqlite3"}))
    settings.WAREHOUSES_FILE.chmod(0o644)
    previous = os.umask(0)
    try:
        warehouse_register(name="sales", dialect="sqlite", dsn="sqlite:////tmp/sales.sqlite3")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(settings.WAREHOUSES_FILE.stat().st_mode) == 0o600
    assert json.loads(settings.WAREHOUSES_FILE.read_text()) == {
        "old": "sqlite:////old.sqlite3",
        "sales": "sqlite:////tmp/sales.sqlite3",
    }
    assert [p.name for p in settings.WAREHOUSES_FILE.parent.iterdir() if p.name.endswith(".tmp")] == []


# --- caps during execution -----------------------------------------------------------------


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
    import psycopg

    conn = open_postgres(shop_postgres.reader_dsn, timeout_s=60)  # the server's own timeout is far off
    pid = conn.info.backend_pid
    watchdog = Watchdog(conn, shop_postgres.reader_dsn, 0.2)
    with pytest.raises(psycopg.errors.QueryCanceled), watchdog:
        conn.execute("SELECT pg_sleep(30)")
    assert watchdog.fired
    conn.close()
    assert backend_gone(shop_postgres.reader_dsn, pid)


# --- the login role check ------------------------------------------------------------------


@pytest.fixture
def make_role(shop_postgres):
    """Create login roles with this run's unique prefix in the shop database; drop them after."""
    import psycopg
    from psycopg import sql

    created = []

    def make(*statements: str) -> str:
        role = unique_name("probes_role")
        created.append(role)
        with psycopg.connect(shop_postgres.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
            conn.execute(sql.SQL("GRANT SELECT ON orders TO {}").format(sql.Identifier(role)))
            for statement in statements:
                names = {"role": sql.Identifier(role), "other": sql.Identifier(role + "_g")}
                conn.execute(sql.SQL(statement).format(db=sql.Identifier(conn.info.dbname), **names))
        return reader_dsn(shop_postgres.dsn, role, "unused")

    yield make
    with psycopg.connect(shop_postgres.dsn, autocommit=True) as conn:
        for role in created:
            for name in (role, role + "_g"):
                exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name]).fetchone()
                if exists:
                    conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
                    conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def test_the_reader_role_passes_the_check_and_is_stored_on_the_catalogue(shop_postgres):
    check = catalogue_get_latest(warehouse_id=shop_postgres.pk).role_check
    assert check["safe"] and check["findings"] == [] and check["applicable"]
    assert check["login_role"] == reader_role_of(shop_postgres)


def reader_role_of(warehouse) -> str:
    from urllib.parse import urlparse

    return urlparse(warehouse.reader_dsn).username


def test_a_superuser_dsn_is_refused_at_registration_naming_the_finding(shop_postgres):
    with pytest.raises(UnsafeWarehouseRole, match="superuser") as refused:
        warehouse_register(name="owner-pg", dialect="postgres", dsn=shop_postgres.dsn)
    assert "pg_read_server_files" in str(refused.value) and "CREATE on the database" in str(refused.value)
    assert not Warehouse.objects.filter(name="owner-pg").exists()


@pytest.mark.parametrize(
    ("grants", "finding"),
    [
        (["ALTER ROLE {role} CREATEDB"], "is CREATEDB"),
        (["ALTER ROLE {role} CREATEROLE"], "is CREATEROLE"),
        (["ALTER ROLE {role} BYPASSRLS"], "is BYPASSRLS"),
        (["ALTER ROLE {role} REPLICATION"], "is REPLICATION"),
        (["GRANT pg_signal_backend TO {role}"], "member of pg_signal_backend"),
        (
            ["CREATE ROLE {other}", "GRANT pg_read_server_files TO {other}", "GRANT {other} TO {role}"],
            "member of pg_read_server_files",
        ),
        (["CREATE ROLE {other}", "GRANT pg_monitor TO {other}", "GRANT {other} TO {role}"], "member of pg_monitor"),
        (["CREATE ROLE {other} CREATEDB", "GRANT {other} TO {role}"], "_g', which is CREATEDB"),
        (["GRANT CREATE ON SCHEMA public TO {role}"], "CREATE on schema public"),
        (["GRANT CREATE ON DATABASE {db} TO {role}"], "CREATE on the database"),
        (["CREATE SCHEMA {role} AUTHORIZATION {role}"], "owns objects in the warehouse"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_role_that_can_do_more_than_read_is_refused_naming_why(shop_postgres, make_role, grants, finding):
    dsn = make_role(*grants)
    with pytest.raises(UnsafeWarehouseRole, match=finding.replace("(", r"\(")):
        warehouse_register(name="wide-pg", dialect="postgres", dsn=dsn)


def test_a_failing_check_at_refresh_is_stored_and_stops_every_model_run(shop_postgres, make_role, monkeypatch):
    from probes.catalogue import catalogue_refresh
    from probes.verifier import verify

    monkeypatch.setenv(dsn_env_var("shop-pg"), make_role("ALTER ROLE {role} CREATEDB"))
    with pytest.raises(UnsafeWarehouseRole, match="CREATEDB"):
        catalogue_refresh(warehouse=shop_postgres)
    stored = catalogue_get_latest(warehouse_id=shop_postgres.pk).role_check
    assert not stored["safe"] and any("CREATEDB" in f for f in stored["findings"])
    refused = run_readonly(warehouse=shop_postgres, sql="SELECT count(*) FROM orders")
    assert not refused.allowed and not refused.executed and "CREATEDB" in refused.reason
    verdict = verify(
        "SELECT count(*) FROM orders", catalogue_get_latest(warehouse_id=shop_postgres.pk), warehouse=shop_postgres
    )
    assert verdict.failure_class == "transport" and "CREATEDB" in verdict.message


def test_allow_unsafe_role_lets_an_unsafe_role_run(shop_postgres, settings, monkeypatch):
    from probes.catalogue import catalogue_refresh

    settings.WAREHOUSE_ALLOW_UNSAFE_ROLE = True
    monkeypatch.setenv(dsn_env_var("shop-pg"), shop_postgres.dsn)
    catalogue = catalogue_refresh(warehouse=shop_postgres)
    assert not catalogue.role_check["safe"] and catalogue.role_check["findings"][0].startswith("is superuser")
    assert run_readonly(warehouse=shop_postgres, sql="SELECT count(*) FROM orders").rows == [[4]]


def test_a_dsn_changed_after_the_check_runs_nothing_until_checked_again(shop_postgres, monkeypatch):
    monkeypatch.setenv(dsn_env_var("shop-pg"), shop_postgres.dsn)  # the superuser, never checked
    result = run_readonly(warehouse=shop_postgres, sql="SELECT count(*) FROM orders")
    assert not result.executed and "run refresh_catalogue" in result.reason


def test_there_is_no_set_role_to_undo_the_login_role_is_the_wall(shop_postgres):
    result = pg_run(shop_postgres, "SELECT set_config('role', 'none', true), current_user, session_user")
    role = reader_role_of(shop_postgres)
    assert result.rows[0][1:] == [role, role]
    denied = pg_run(shop_postgres, "SELECT count(*) FROM pg_authid")
    assert "permission denied" in denied.error


def test_sqlite_printf_keeps_its_meaning_but_refuses_widths_past_the_length_limit(shop_sqlite, settings):
    settings.WAREHOUSE_SQLITE_MAX_LENGTH = 1_000_000
    same = sqlite_dsn_run(shop_sqlite, "SELECT printf('%5.2f|%-4d|%s|%.*c', 3.14159, 7, 'a', 3, 'x'), format('%d', 1)")
    assert same.rows == [[" 3.14|7   |a|xxx", "1"]]
    for wide in ("SELECT printf('%.*c', 2000000000, 'x')", "SELECT printf('%2000000000c', 'x')"):
        refused = sqlite_dsn_run(shop_sqlite, wide)
        assert not refused.executed and refused.error_code == "limit", wide
        assert "printf width or precision over 1000000 bytes" in refused.error


def test_run_sql_names_a_file_that_is_not_utf8(shop_sqlite, tmp_path):
    path = tmp_path / "q.sql"
    path.write_bytes(b"SELECT '\xed\xa0\x80'")
    with pytest.raises(CommandError, match=r"is not valid UTF-8 \(byte 8\)"):
        call_command("run_sql", "--warehouse", "shop", "--sql-file", str(path), stdout=io.StringIO())
