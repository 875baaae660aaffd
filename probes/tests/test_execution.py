"""run_readonly: the row cap, the JSON contract, DB enforcement and faults."""

import io
import json
import sqlite3

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from probes.execution import execute_guarded, run_readonly
from probes.models import Warehouse


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

    result = execute_guarded(warehouse=shop_sqlite, sql="DELETE FROM orders", row_cap=10, timeout_s=1)
    assert not result.executed
    assert "not authorized" in result.error
    count = sqlite3.connect(shop_sqlite.path).execute("SELECT count(*) FROM orders").fetchone()[0]
    assert count == 4


def test_postgres_runs_in_a_read_only_transaction_even_if_the_guard_were_bypassed(shop_postgres):

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


def test_run_sql_names_a_file_that_is_not_utf8(shop_sqlite, tmp_path):
    path = tmp_path / "q.sql"
    path.write_bytes(b"SELECT '\xed\xa0\x80'")
    with pytest.raises(CommandError, match=r"is not valid UTF-8 \(byte 8\)"):
        call_command("run_sql", "--warehouse", "shop", "--sql-file", str(path), stdout=io.StringIO())
