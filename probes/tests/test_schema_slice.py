"""The schema a judge reads: deterministic rendering, sample values, slicing to a budget."""

import copy

import psycopg
import pytest

from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, register_demo_warehouse
from probes.schema_slice import (
    estimate_tokens,
    one_hop_tables,
    referenced_objects,
    render_catalogue,
    render_referenced,
    schema_slice,
)

pytestmark = pytest.mark.django_db

REVENUE_SQL = (
    "SELECT o.status, SUM(oi.unit_price * oi.quantity) FROM orders o "
    "JOIN order_items oi ON oi.order_id = o.order_id GROUP BY o.status"
)


@pytest.fixture
def demo_catalogue(settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    path = tmp_path / "demo.sqlite3"
    build_demo_warehouse(str(path))
    return catalogue_refresh(warehouse=register_demo_warehouse(str(path)))


def test_refresh_samples_low_cardinality_text_columns_through_the_read_only_path(demo_catalogue):
    samples = demo_catalogue.snapshot["samples"]
    assert samples["orders"]["status"] == ["cancelled", "completed", "pending", "refunded"]
    assert samples["payments"]["method"] == ["bank_transfer", "card", "gift_card", "paypal"]
    # Unique and high-cardinality columns are never sampled (no e-mail addresses in prompts).
    assert "email" not in samples.get("customers", {})
    assert "customer_name" not in samples.get("customers", {})


def test_the_same_snapshot_renders_byte_identical_text_whatever_its_key_order(demo_catalogue):
    snapshot = demo_catalogue.snapshot
    shuffled = copy.deepcopy(snapshot)
    shuffled["tables"] = dict(reversed(list(shuffled["tables"].items())))
    first = render_catalogue(snapshot, warehouse_name="demo", version=1)
    assert first == render_catalogue(shuffled, warehouse_name="demo", version=1)
    for expected in (
        "TABLE orders (~3000 rows)",
        "  customer_id integer NOT NULL -> customers.customer_id",
        "  email text NOT NULL UNIQUE",
        "  region_id integer NULL -> regions.region_id",
        "  order_id integer NOT NULL PK",
    ):
        assert expected in first


def test_a_catalogue_within_the_budget_is_shared_whole(demo_catalogue):
    whole = schema_slice(catalogue=demo_catalogue, sql=REVENUE_SQL, dialect="sqlite", token_budget=4000)
    other = schema_slice(catalogue=demo_catalogue, sql="SELECT 1", dialect="sqlite", token_budget=4000)
    assert whole.mode == "full" and whole.shared and whole.text == other.text
    assert whole.catalogue_version == demo_catalogue.version


def test_over_budget_the_slice_drops_one_hop_tables_first_then_unnamed_columns_and_says_so(demo_catalogue):
    snapshot = demo_catalogue.snapshot
    roomy = render_referenced(snapshot, sql=REVENUE_SQL, dialect="sqlite", token_budget=4000)
    assert roomy.tables == ["customers", "order_items", "orders", "payments", "products", "shipments"]
    assert not roomy.dropped_tables and "Dropped" not in roomy.text
    tight = render_referenced(snapshot, sql=REVENUE_SQL, dialect="sqlite", token_budget=300)
    assert tight.tables[:2] == ["order_items", "orders"] or set(tight.tables) >= {"order_items", "orders"}
    assert tight.dropped_tables and not tight.dropped_columns
    assert estimate_tokens(tight.text) <= 300
    tiny = render_referenced(snapshot, sql=REVENUE_SQL, dialect="sqlite", token_budget=120)
    assert set(tiny.tables) == {"order_items", "orders"}
    assert "orders.order_date" in tiny.dropped_columns and "orders.status" not in tiny.dropped_columns
    assert "  status text NOT NULL" in tiny.text and "  order_date" not in tiny.text
    assert "columns the SQL does not name, not shown: " in tiny.text


def test_referenced_tables_ignore_ctes_and_one_hop_goes_both_ways(demo_catalogue):
    tables = demo_catalogue.snapshot["tables"]
    sql = "WITH orders_2024 AS (SELECT * FROM orders) SELECT COUNT(*) FROM orders_2024 JOIN payments USING (order_id)"
    referenced, columns = referenced_objects(sql, "sqlite", tables)
    assert referenced == ["orders", "payments"] and "order_id" in columns
    assert one_hop_tables(tables, ["customers"]) == ["orders", "regions"]


def test_a_warehouse_without_a_catalogue_gives_no_slice_and_says_why():
    empty = schema_slice(catalogue=None, sql="SELECT 1", dialect="sqlite", token_budget=4000)
    assert empty.mode == "none" and empty.text == "" and "refresh_catalogue" in empty.reason


def test_postgres_table_and_column_comments_reach_the_rendered_catalogue(shop_postgres):

    with psycopg.connect(shop_postgres.dsn, autocommit=True) as conn:
        conn.execute("COMMENT ON TABLE orders IS 'One row per checkout'")
        conn.execute("COMMENT ON COLUMN orders.status IS 'Lifecycle state'")
    try:
        catalogue = catalogue_refresh(warehouse=shop_postgres)
        assert catalogue.snapshot["comments"]["orders"] == {"": "One row per checkout", "status": "Lifecycle state"}
        text = render_catalogue(catalogue.snapshot, warehouse_name="shop-pg", version=catalogue.version)
        assert "TABLE orders (~" in text and "  -- One row per checkout" in text
        assert "-- Lifecycle state" in text
    finally:
        with psycopg.connect(shop_postgres.dsn, autocommit=True) as conn:
            conn.execute("COMMENT ON TABLE orders IS NULL")
            conn.execute("COMMENT ON COLUMN orders.status IS NULL")
