"""Catalogue introspection (SQLite pragmas, pg_catalog), versioning, and its constraints."""

import io
import json
import sqlite3

import psycopg
import pytest
from django.core.management import call_command
from django.db import IntegrityError
from psycopg import sql

from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import create_reader_role
from probes.models import Catalogue
from probes.selectors import catalogue_get_latest
from probes.tests import shop
from probes.tests.conftest import drop_role, register, unique_name
from tests.support.services import require_postgres_server


def check_shop_snapshot(snapshot):
    tables = snapshot["tables"]
    assert set(tables) == {"customers", "orders", "order_items", "shipments"}
    orders = tables["orders"]
    assert orders["primary_key"] == ["order_id"]
    assert orders["foreign_keys"] == [
        {"columns": ["customer_id"], "ref_table": "customers", "ref_columns": ["customer_id"]}
    ]
    assert orders["row_estimate"] == 4
    columns = {c["name"]: c for c in orders["columns"]}
    assert list(columns) == ["order_id", "customer_id", "order_date", "status", "total"]
    assert columns["status"]["nullable"] is False
    assert tables["customers"]["unique"] == [["email"]]
    assert {c["name"]: c["nullable"] for c in tables["customers"]["columns"]}["email"] is True


def test_sqlite_introspection_finds_keys_nullability_and_counts(shop_sqlite):
    catalogue = catalogue_get_latest(warehouse_id=shop_sqlite.pk)
    assert catalogue.version == 1
    assert catalogue.snapshot["dialect"] == "sqlite"
    check_shop_snapshot(catalogue.snapshot)


def test_postgres_introspection_finds_keys_nullability_and_counts(shop_postgres):
    catalogue = catalogue_get_latest(warehouse_id=shop_postgres.pk)
    assert catalogue.snapshot["dialect"] == "postgres"
    check_shop_snapshot(catalogue.snapshot)
    assert catalogue.snapshot["tables"]["orders"]["columns"][0]["type"] == "integer"


def test_an_unchanged_schema_keeps_its_version(shop_sqlite):
    first = catalogue_get_latest(warehouse_id=shop_sqlite.pk)
    assert catalogue_refresh(warehouse=shop_sqlite) == first
    assert Catalogue.objects.filter(warehouse=shop_sqlite).count() == 1


def test_a_schema_change_makes_a_new_version(shop_sqlite):
    conn = sqlite3.connect(shop_sqlite.path)
    conn.execute("CREATE TABLE returns (return_id INTEGER PRIMARY KEY, order_id INTEGER)")
    conn.commit()
    conn.close()
    catalogue = catalogue_refresh(warehouse=shop_sqlite)
    assert catalogue.version == 2
    assert "returns" in catalogue.snapshot["tables"]
    assert catalogue_get_latest(warehouse_id=shop_sqlite.pk) == catalogue


def test_refresh_catalogue_command_reports_the_version(shop_sqlite):
    out = io.StringIO()
    call_command("refresh_catalogue", "shop", stdout=out)
    assert out.getvalue().strip() == "shop: catalogue v1, 4 tables"


def test_two_catalogues_cannot_share_a_version(shop_sqlite):
    with pytest.raises(IntegrityError, match="probes_catalogue_unique_version|UNIQUE"):
        Catalogue.objects.create(warehouse=shop_sqlite, version=1, snapshot={})


def test_a_catalogue_version_starts_at_one(shop_sqlite):
    with pytest.raises(IntegrityError, match="probes_catalogue_version_positive|CHECK"):
        Catalogue.objects.create(warehouse=shop_sqlite, version=0, snapshot={})


def test_the_defog_schemas_introspect_on_postgres(db, defog_postgres_dsns, monkeypatch):

    warehouse = register(monkeypatch, "defog-ewallet", "postgres", defog_postgres_dsns["ewallet"])
    tables = catalogue_get_latest(warehouse_id=warehouse.pk).snapshot["tables"]
    assert "consumer_div.users" in tables
    assert tables["consumer_div.users"]["primary_key"] == ["uid"]
    atis = register(monkeypatch, "defog-atis", "postgres", defog_postgres_dsns["atis"])
    assert len(catalogue_get_latest(warehouse_id=atis.pk).snapshot["tables"]) == 24  # every CREATE TABLE in atis.sql


@pytest.fixture
def canary_shop():
    """A shop database with objects its reader was never granted, and a column grant on partners."""
    admin = require_postgres_server()
    database, reader_role, tenant = (
        unique_name("probes_canary"),
        unique_name("probes_canary_r"),
        unique_name("t_canary"),
    )
    owner = shop.create_postgres(admin, database)
    reader = create_reader_role(owner, role=reader_role, tables=shop.TABLES)
    shop.add_postgres_canaries(owner, reader_role, tenant)
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute("COMMENT ON COLUMN partners.api_secret_canary IS 'the secret'")
        conn.execute("COMMENT ON TABLE staff_notes_canary IS 'hidden'")
        conn.execute("ALTER TABLE shipments ADD COLUMN partner_id INTEGER REFERENCES partners (partner_id)")
        conn.execute("ALTER TABLE orders ADD COLUMN note_id INTEGER")
    yield reader
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
    for role in (reader_role, tenant):
        drop_role(admin, role)


def test_the_postgres_catalogue_is_what_the_grant_allows(db, canary_shop, monkeypatch):
    warehouse = register(monkeypatch, "canary-pg", "postgres", canary_shop)
    snapshot = catalogue_get_latest(warehouse_id=warehouse.pk).snapshot
    assert set(snapshot["tables"]) == {"customers", "orders", "order_items", "shipments", "partners"}
    partners = snapshot["tables"]["partners"]
    assert [c["name"] for c in partners["columns"]] == ["partner_id", "name"]  # the column grant
    # The key on partners is wholly granted; a foreign key to it is kept, nothing else leaks.
    assert partners["primary_key"] == ["partner_id"]
    assert shop.CANARY not in json.dumps(snapshot)
    assert "the secret" not in json.dumps(snapshot) and "hidden" not in json.dumps(snapshot)
