"""A small shop schema (customers, orders, order_items, shipments) for probe tests and benches.

Deliberately shaped for fan-out: an order has several items and sometimes several
shipments, so summing item revenue across a shipments join counts items twice.
"""

import hashlib
import random
import sqlite3
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import psycopg
from psycopg import sql

DDL = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
    order_date TEXT NOT NULL,
    status TEXT NOT NULL,
    total NUMERIC NOT NULL
);
CREATE TABLE order_items (
    item_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders (order_id),
    product TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price NUMERIC NOT NULL
);
CREATE TABLE shipments (
    shipment_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders (order_id),
    shipped_on TEXT
);
"""
TABLES = ("customers", "orders", "order_items", "shipments")
POSTGRES_EXTRA = """
CREATE SEQUENCE shop_seq;
CREATE FUNCTION shop_wipe() RETURNS integer LANGUAGE sql AS 'DELETE FROM shipments RETURNING 1';
CREATE PROCEDURE shop_wipe_proc() LANGUAGE sql AS 'DELETE FROM shipments';
"""


# Objects the hostile harness's reader is never granted, each named with "canary": an answer
# that names one shows a catalogue read beyond the grant. `partners` is granted by column only
# (partner_id, name): its secret column and value are canaries too.
CANARY = "canary"
POSTGRES_CANARIES = """
CREATE SCHEMA vault_canary;
CREATE TABLE vault_canary.payroll_canary (employee TEXT, salary NUMERIC);
INSERT INTO vault_canary.payroll_canary VALUES ('employee-canary', 1);
CREATE TABLE staff_notes_canary (note TEXT);
INSERT INTO staff_notes_canary VALUES ('note-canary');
CREATE VIEW revenue_canary AS SELECT sum(total) AS revenue FROM orders;
CREATE TYPE mood_canary AS ENUM ('calm_canary');
CREATE DOMAIN positive_canary AS INTEGER CHECK (VALUE > 0);
CREATE FUNCTION helper_canary(x INTEGER) RETURNS INTEGER LANGUAGE sql AS 'SELECT x';
CREATE SEQUENCE counter_canary;
CREATE TABLE partners (partner_id INTEGER PRIMARY KEY, name TEXT NOT NULL, api_secret_canary TEXT);
INSERT INTO partners VALUES (1, 'Acme', 'sk-canary-0001'), (2, 'Globex', 'sk-canary-0002');
"""
PARTNER_COLUMNS_GRANTED = ("partner_id", "name")


def add_postgres_canaries(owner_dsn: str, reader_role: str, tenant_role: str) -> None:
    """Add the never-granted objects, another tenant's login role, and the column grant on partners."""
    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        conn.execute(POSTGRES_CANARIES)
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(tenant_role)))
        columns = sql.SQL(", ").join(sql.Identifier(c) for c in PARTNER_COLUMNS_GRANTED)
        conn.execute(sql.SQL("GRANT SELECT ({}) ON partners TO {}").format(columns, sql.Identifier(reader_role)))
        conn.execute("ANALYZE")


def rows(orders: int = 4, seed: int = 7) -> dict[str, list[tuple]]:
    """Return the rows: the four hand-checked orders, then generated ones if asked for more."""
    data = {
        "customers": [(1, "Ada", "ada@example.com"), (2, "Bo", "bo@example.com"), (3, "Cy", None)],
        "orders": [
            (10, 1, "2026-01-01", "paid", 30),
            (11, 1, "2026-01-02", "cancelled", 5),
            (12, 2, "2026-01-03", "paid", 12),
            (13, 3, "2026-01-04", "paid", 7),
        ],
        "order_items": [
            (100, 10, "pen", 2, 5),
            (101, 10, "ink", 1, 20),
            (102, 11, "pad", 1, 5),
            (103, 12, "pen", 1, 12),
            (104, 13, "cap", 1, 7),
        ],
        # Order 10 went out in two shipments; order 11 was never shipped.
        "shipments": [
            (1000, 10, "2026-01-02"),
            (1001, 10, "2026-01-05"),
            (1002, 12, "2026-01-04"),
            (1003, 13, "2026-01-05"),
        ],
    }
    rng = random.Random(seed)
    item_id, shipment_id = 200, 2000
    for order_id in range(100, 100 + max(0, orders - 4)):
        items = [(item_id + k, order_id, rng.choice(["pen", "ink", "pad"]), rng.randint(1, 3), 5) for k in range(3)]
        item_id += 3
        total = sum(q * p for _, _, _, q, p in items)
        data["orders"].append((order_id, rng.randint(1, 3), "2026-02-01", "paid", total))
        data["order_items"].extend(items)
        for _ in range(rng.choice([1, 1, 2])):
            data["shipments"].append((shipment_id, order_id, "2026-02-03"))
            shipment_id += 1
    return data


def create_sqlite(path: Path, orders: int = 4) -> str:
    """Write the shop to a fresh SQLite file and return its DSN."""
    path = Path(path)
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(DDL)
    for table, values in rows(orders).items():
        placeholders = ", ".join("?" * len(values[0]))
        conn.executemany(f"INSERT INTO {table} VALUES ({placeholders})", values)
    conn.commit()
    conn.close()
    return f"sqlite:///{path.resolve()}"


def create_postgres(admin_dsn: str, database: str, orders: int = 4) -> str:
    """Create database `database` afresh with the shop in it and return its DSN."""
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    dsn = urlunparse(urlparse(admin_dsn)._replace(path="/" + database))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DDL)
        conn.execute(POSTGRES_EXTRA)
        with conn.cursor() as cursor:
            for table, values in rows(orders).items():
                placeholders = sql.SQL(", ").join(sql.Placeholder() * len(values[0]))
                cursor.executemany(
                    sql.SQL("INSERT INTO {} VALUES ({})").format(sql.Identifier(table), placeholders), values
                )
        conn.execute("ANALYZE")
    return dsn


def sqlite_fingerprint(path: Path) -> str:
    """Hash of the file's bytes: any write, even one rolled back into the journal, changes it."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def postgres_state(dsn: str) -> dict:
    """Checksums of every table, write counters, relation count and sequence state."""
    state = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in TABLES:
            query = sql.SQL("SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {} t")
            state[table] = conn.execute(query.format(sql.Identifier(table))).fetchone()
        conn.execute("SELECT pg_stat_clear_snapshot()")
        state["writes"] = conn.execute(
            "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables"
        ).fetchone()[0]
        state["relations"] = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
        ).fetchone()[0]
        state["sequence"] = conn.execute("SELECT last_value, is_called FROM shop_seq").fetchone()
        state["large_objects"] = conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0]
    return state
