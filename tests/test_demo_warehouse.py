"""The demo warehouse: deterministic, trap-laden, identical on SQLite and PostgreSQL, registered as `demo`."""

import io
import json
import os
import sqlite3
import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from psycopg import sql

from probes.demo_warehouse import (
    ORDER_COUNT,
    PRIMARY_KEYS,
    TABLES,
    build_demo_warehouse,
    register_demo_warehouse,
    table_checksums,
)
from probes.models import Warehouse
from probes.role_check import postgres_role_check
from tests.support.services import postgres_dsn, require_postgres_server

# One per test process, named after it: a test here drops and rebuilds its tables, and a
# suite running beside this one on the same server must not see it. Dropped at the end.
WAREHOUSE_DATABASE = f"demodata_wh_{os.getpid()}"
CREATED: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _drop_this_runs_warehouse_database():
    yield
    if not CREATED:
        return  # no test here reached PostgreSQL

    try:
        with psycopg.connect(postgres_dsn(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {WAREHOUSE_DATABASE} WITH (FORCE)")
    except psycopg.OperationalError:
        pass  # the server went away; nothing of ours is left on it to drop


def demo_postgres_dsn() -> str:
    """Return the DSN of this suite's own warehouse database, creating it when missing."""

    server = require_postgres_server()
    with psycopg.connect(server, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [WAREHOUSE_DATABASE]).fetchone():
            conn.execute(f"CREATE DATABASE {WAREHOUSE_DATABASE}")
        CREATED.append(WAREHOUSE_DATABASE)
    parts = urlsplit(server)
    return urlunsplit(parts._replace(path=f"/{WAREHOUSE_DATABASE}"))


@pytest.fixture(scope="module")
def demo_sqlite(tmp_path_factory):
    path = tmp_path_factory.mktemp("warehouse") / "demo.sqlite3"
    build_demo_warehouse(path)
    return path


def scalar(path, sql):
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchone()[0]


def test_building_again_or_elsewhere_gives_the_same_rows(demo_sqlite, tmp_path):
    first = table_checksums(demo_sqlite)
    build_demo_warehouse(demo_sqlite)  # over the existing tables
    other = tmp_path / "other.sqlite3"
    build_demo_warehouse(other)
    assert table_checksums(demo_sqlite) == first
    assert table_checksums(other) == first


def test_another_seed_gives_other_rows(demo_sqlite, tmp_path):
    other = tmp_path / "seeded.sqlite3"
    build_demo_warehouse(other, seed=7)
    assert table_checksums(other)["orders"] != table_checksums(demo_sqlite)["orders"]


def test_the_build_reports_a_few_thousand_orders(tmp_path):
    counts = build_demo_warehouse(tmp_path / "counted.sqlite3")
    assert set(counts) == set(TABLES)
    assert counts["orders"] == ORDER_COUNT >= 2000
    assert counts["order_items"] > counts["orders"]


def test_every_table_declares_its_primary_key_and_the_foreign_keys(demo_sqlite):
    with sqlite3.connect(demo_sqlite) as conn:
        for table, key in PRIMARY_KEYS.items():
            columns = conn.execute(f"PRAGMA table_info({table})").fetchall()
            assert [column[1] for column in columns if column[5]] == [key], table
        foreign_keys = {
            (table, row[3], row[2]) for table in TABLES for row in conn.execute(f"PRAGMA foreign_key_list({table})")
        }
        violations = conn.execute("PRAGMA foreign_key_check").fetchall()
    assert foreign_keys == {
        ("customers", "region_id", "regions"),
        ("orders", "customer_id", "customers"),
        ("order_items", "order_id", "orders"),
        ("order_items", "product_id", "products"),
        ("payments", "order_id", "orders"),
        ("shipments", "order_id", "orders"),
    }
    assert violations == []


def test_some_customers_with_orders_have_no_region(demo_sqlite):
    orders_without_region = scalar(
        demo_sqlite,
        "SELECT COUNT(*) FROM orders o JOIN customers c ON c.customer_id = o.customer_id WHERE c.region_id IS NULL",
    )
    assert orders_without_region > 50


def test_some_orders_have_several_shipments_and_several_payments(demo_sqlite):
    split_shipments = scalar(
        demo_sqlite, "SELECT COUNT(*) FROM (SELECT order_id FROM shipments GROUP BY order_id HAVING COUNT(*) > 1) s"
    )
    split_payments = scalar(
        demo_sqlite, "SELECT COUNT(*) FROM (SELECT order_id FROM payments GROUP BY order_id HAVING COUNT(*) > 1) p"
    )
    assert split_shipments > 50
    assert split_payments > 50


def test_split_payments_add_up_to_the_order_total(demo_sqlite):
    mismatches = scalar(
        demo_sqlite,
        """SELECT COUNT(*) FROM orders o JOIN (SELECT order_id, SUM(amount) AS paid FROM payments GROUP BY order_id) p
           ON p.order_id = o.order_id WHERE ABS(p.paid - o.order_total) > 0.001""",
    )
    assert mismatches == 0


def test_many_lines_sell_at_a_price_other_than_list_price(demo_sqlite):
    off_list = scalar(
        demo_sqlite,
        "SELECT COUNT(*) FROM order_items oi JOIN products p ON p.product_id = oi.product_id "
        "WHERE oi.unit_price <> p.list_price",
    )
    assert off_list > 500


def test_orders_take_every_status_and_only_shipped_ones_have_a_shipped_date(demo_sqlite):
    with sqlite3.connect(demo_sqlite) as conn:
        statuses = {row[0] for row in conn.execute("SELECT DISTINCT status FROM orders")}
        unshipped_with_date = conn.execute(
            "SELECT COUNT(*) FROM orders WHERE status IN ('pending', 'cancelled') AND shipped_date IS NOT NULL"
        ).fetchone()[0]
    assert statuses == {"completed", "pending", "cancelled", "refunded"}
    assert unshipped_with_date == 0


def test_daily_sales_aggregates_the_completed_orders(demo_sqlite):
    daily_total = scalar(demo_sqlite, "SELECT SUM(revenue) FROM daily_sales")
    completed_total = scalar(demo_sqlite, "SELECT SUM(order_total) FROM orders WHERE status = 'completed'")
    assert daily_total == pytest.approx(completed_total, abs=0.01)


def test_postgresql_build_holds_the_same_rows_as_sqlite(demo_sqlite):
    dsn = demo_postgres_dsn()
    build_demo_warehouse(dsn)
    build_demo_warehouse(dsn)  # drop and recreate: idempotent
    assert table_checksums(dsn) == table_checksums(demo_sqlite)


@pytest.fixture
def isolated_var(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    return tmp_path


@pytest.mark.django_db
def test_load_demo_warehouse_builds_a_sqlite_file_under_var_and_registers_it(isolated_var):
    output = io.StringIO()
    call_command("load_demo_warehouse", stdout=output)

    assert "registered as `demo`" in output.getvalue()
    path = isolated_var / "demo_warehouse.sqlite3"
    warehouse = Warehouse.objects.get(name="demo")
    assert scalar(path, "SELECT COUNT(*) FROM orders") == ORDER_COUNT
    assert warehouse.dialect == "sqlite"
    assert json.loads((isolated_var / "warehouses.json").read_text()) == {"demo": f"sqlite:///{path}"}


@pytest.mark.django_db
def test_registering_keeps_the_other_warehouses_and_stores_no_dsn_in_the_database(isolated_var):
    (isolated_var / "warehouses.json").write_text(json.dumps({"shop": "postgresql://reader@db/shop"}))
    path = isolated_var / "elsewhere.sqlite3"

    register_demo_warehouse(path)
    register_demo_warehouse(path)

    dsns = json.loads((isolated_var / "warehouses.json").read_text())
    assert dsns == {"shop": "postgresql://reader@db/shop", "demo": f"sqlite:///{path}"}
    assert Warehouse.objects.filter(name="demo").count() == 1
    stored = json.dumps(list(Warehouse.objects.values()), default=str)
    assert str(path) not in stored


@pytest.mark.django_db
def test_load_demo_warehouse_with_a_dsn_builds_into_postgresql_and_registers_its_reader(isolated_var):
    dsn = demo_postgres_dsn()

    reader_role = f"demo_reader_{os.getpid()}_{uuid.uuid4().hex[:6]}"  # roles are cluster-wide: this run's own
    with psycopg.connect(dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS daily_sales")
        conn.execute("CREATE TABLE IF NOT EXISTS not_demo (secret text)")
    try:
        call_command("load_demo_warehouse", "--dsn", dsn, "--reader-role", reader_role, stdout=io.StringIO())
        with psycopg.connect(dsn) as conn:
            days = conn.execute("SELECT COUNT(*) FROM daily_sales").fetchone()[0]
        assert days > 300
        warehouse = Warehouse.objects.get(name="demo")
        assert warehouse.dialect == "postgres"
        registered = json.loads((isolated_var / "warehouses.json").read_text())["demo"]
        assert urlsplit(registered).username == reader_role and registered != dsn
        with psycopg.connect(registered) as reader:
            assert reader.execute("SELECT COUNT(*) FROM daily_sales").fetchone()[0] == days
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                reader.execute("SELECT * FROM not_demo")
            reader.rollback()
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                reader.execute("CREATE TABLE pwned (x int)")

        assert postgres_role_check(registered).findings == []
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS not_demo")
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(reader_role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(reader_role)))


def test_load_demo_warehouse_never_changes_an_existing_role_that_can_do_more_than_read(isolated_var, db):
    dsn = demo_postgres_dsn()
    role = f"demo_wide_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN CREATEDB").format(sql.Identifier(role)))
    try:
        with pytest.raises(CommandError, match="can do more than read"):
            call_command("load_demo_warehouse", "--dsn", dsn, "--reader-role", role, stdout=io.StringIO())
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT rolcreatedb FROM pg_roles WHERE rolname = %s", [role]).fetchone() == (True,)
        assert not Warehouse.objects.filter(name="demo").exists()
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_load_demo_warehouse_refuses_a_dsn_it_cannot_build_on():
    with pytest.raises(CommandError, match="PostgreSQL or MySQL DSN"):
        call_command("load_demo_warehouse", "--dsn", "oracle://scott@localhost/demo")
