"""Issue 34: a catalogue from a file for a warehouse Docket cannot reach.

A Snowflake DDL file and a BigQuery information_schema.columns export (with a key file) are
imported; the verifier's static rules run in that dialect against them, and everything that
needs the database is a fault with cause `no_connection`, never a reject.
"""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from probes.catalogue import catalogue_refresh
from probes.execution import run_readonly
from probes.fanout import fanout_probe
from probes.models import Warehouse
from probes.outcome import OutcomeKind, execution_outcome
from probes.verifier import verify
from probes.warehouses import WarehouseUnavailable

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data"


def import_file(name: str, path: Path, dialect: str, *extra: str) -> str:
    out = io.StringIO()
    call_command("import_catalogue", name, str(path), "--dialect", dialect, *extra, stdout=out)
    return out.getvalue()


def verify_json(warehouse: str, sql: str, tmp_path: Path) -> dict:
    sql_file = tmp_path / "q.sql"
    sql_file.write_text(sql)
    out = io.StringIO()
    call_command("verify_sql", "--warehouse", warehouse, "--sql-file", str(sql_file), "--format", "json", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def snowflake():
    said = import_file("snow", DATA / "snowflake_shop.sql", "snowflake")
    assert "catalogue v1 from file, no connection, 4 tables" in said
    return Warehouse.objects.get(name="snow")


@pytest.fixture
def bigquery():
    import_file("bq", DATA / "bigquery_columns.csv", "bigquery", "--keys", str(DATA / "bigquery_keys.csv"))
    return Warehouse.objects.get(name="bq")


def test_snowflake_ddl_becomes_a_catalogue_of_a_warehouse_with_no_connection(snowflake):
    assert snowflake.dialect == "snowflake" and snowflake.has_connection is False
    snapshot = snowflake.catalogues.get().snapshot
    assert snapshot["source"] == "file" and snapshot["default_schema"] == "SALES"
    orders = snapshot["tables"]["ORDERS"]
    assert [c["name"] for c in orders["columns"]] == ["ORDER_ID", "CUSTOMER_ID", "ORDER_DATE", "STATUS", "ORDER_TOTAL"]
    assert orders["primary_key"] == ["ORDER_ID"]
    assert orders["columns"][2] == {"name": "ORDER_DATE", "type": "date", "nullable": False}
    assert orders["foreign_keys"] == [
        {"columns": ["CUSTOMER_ID"], "ref_table": "CUSTOMERS", "ref_columns": ["CUSTOMER_ID"]}
    ]
    assert snapshot["tables"]["ORDER_ITEMS"]["primary_key"] == ["ORDER_ID", "LINE_NO"]
    assert snapshot["tables"]["BIG_ORDERS"]["kind"] == "view"
    assert snapshot["comments"]["CUSTOMERS"] == {"": "One row per customer", "NAME": "full name as given at sign-up"}
    # The same file again is the same version; refresh_catalogue has nothing to connect to.
    assert "catalogue v1 from file" in import_file("snow", DATA / "snowflake_shop.sql", "snowflake")
    with pytest.raises(WarehouseUnavailable, match="catalogue from file, no connection"):
        catalogue_refresh(warehouse=snowflake)


def test_verify_sql_finds_an_unknown_column_in_snowflake_sql(snowflake, tmp_path):
    wrong = verify_json(
        "snow", "SELECT o.order_id, o.shipped_at FROM shop.sales.orders o WHERE o.status = 'open' LIMIT 10", tmp_path
    )
    assert wrong["outcome"] == "failed" and wrong["failure_class"] == "unknown_object"
    assert "shipped_at" in wrong["message"].lower()
    right = verify_json(
        "snow",
        "SELECT c.region, IFF(SUM(o.order_total) > 1000, 'big', 'small') AS size, DATEADD(day, 1, MAX(o.order_date)) "
        "FROM orders o JOIN sales.customers c ON c.customer_id = o.customer_id GROUP BY c.region",
        tmp_path,
    )
    assert right["outcome"] == "passed", right  # the static rules pass; no EXPLAIN is attempted
    cross = verify_json("snow", "SELECT o.order_id, c.name FROM orders o CROSS JOIN customers c LIMIT 5", tmp_path)
    assert cross["outcome"] == "failed" and cross["failure_class"] == "timeout"


def test_require_limit_runs_in_the_file_dialect(bigquery):
    bigquery.verifier_rules = {"require_limit": True}
    result = verify("SELECT order_id FROM `acme-prod.shop.orders`", bigquery.catalogues.get(), warehouse=bigquery)
    assert result.outcome.kind is OutcomeKind.FAILED and "LIMIT" in result.message


def test_a_bigquery_columns_export_with_a_key_file(bigquery, tmp_path):
    snapshot = bigquery.catalogues.get().snapshot
    assert [c["name"] for c in snapshot["tables"]["orders"]["columns"]] == [
        "order_id",
        "customer_id",
        "order_date",
        "status",
        "order_total",
    ]  # by ordinal_position, not by line
    assert snapshot["tables"]["payments"]["foreign_keys"] == [
        {"columns": ["order_id"], "ref_table": "orders", "ref_columns": ["order_id"]}
    ]
    assert snapshot["tables"]["orders"]["columns"][3] == {"name": "status", "type": "string", "nullable": True}
    wrong = verify_json("bq", "SELECT SUM(p.amount_usd) FROM `acme-prod.shop.payments` p", tmp_path)
    assert wrong["failure_class"] == "unknown_object" and "amount_usd" in wrong["message"]
    assert verify_json("bq", "SELECT SUM(p.amount) FROM shop.payments p", tmp_path)["outcome"] == "passed"


def test_everything_that_needs_the_database_is_a_no_connection_fault(snowflake):
    result = run_readonly(warehouse=snowflake, sql="SELECT order_id FROM orders LIMIT 1")
    outcome = execution_outcome(result)
    assert outcome.kind is OutcomeKind.FAULT and outcome.cause == "no_connection"
    assert run_readonly(warehouse=snowflake, sql="DELETE FROM orders").allowed is False  # the guard still speaks first
    # The verifier's EXPLAIN, turned on for this warehouse, is a fault, never a reject.
    snowflake.verifier_rules = {"explain": True}
    result = verify("SELECT order_id FROM orders LIMIT 5", snowflake.catalogues.get(), warehouse=snowflake)
    assert result.outcome.kind is OutcomeKind.FAULT and result.outcome.cause == "no_connection"
    # A fan-out the catalogue's keys predict cannot be counted: the probe is an error, which fails open.
    run = fanout_probe(
        sql="SELECT o.order_id, SUM(o.order_total) FROM orders o JOIN order_items i ON i.order_id = o.order_id "
        "GROUP BY o.order_id",
        warehouse=snowflake,
    )
    assert run.outcome == "error" and "no connection" in run.message
    assert run.check_outcome.kind is OutcomeKind.FAULT


def test_a_connected_warehouse_is_not_overwritten_by_a_file(settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    Warehouse.objects.create(name="live", dialect="sqlite")
    with pytest.raises(CommandError, match="has a connection"):
        import_file("live", DATA / "snowflake_shop.sql", "snowflake")
    with pytest.raises(CommandError, match="no CREATE TABLE"):
        bad = tmp_path / "empty.sql"
        bad.write_text("SELECT 1;")
        import_file("nothing", bad, "snowflake")
    assert not Warehouse.objects.filter(name="nothing").exists()


def test_the_pages_say_catalogue_from_file_no_connection(snowflake, client_for):
    client = client_for("ml_engineer")
    assert "catalogue from file, no connection" in client.get(reverse("probes:index")).content.decode()
    page = client.get(reverse("probes:catalogue", args=["snow"])).content.decode()
    assert page.count("atalogue from file, no connection") >= 2 and "ORDER_ITEMS" in page
