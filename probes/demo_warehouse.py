"""The demo warehouse: a small e-commerce schema full of the traps that make LLM SQL wrong.

The traps are deliberate:

- some customers have no region (``region_id`` NULL), so an inner join to ``regions``
  silently drops their orders;
- ``order_items.unit_price`` differs from ``products.list_price`` on many lines, so the
  wrong price column gives a different revenue;
- some orders have several payments (split payments) and several shipments (split
  deliveries), so joining either multiplies ``orders.order_total``;
- orders can be pending, cancelled or refunded, so a missing status filter counts them;
- ``daily_sales`` is pre-aggregated per day, so averaging it answers a per-day question,
  not a per-order one.

Rows are generated from a fixed seed with a private ``random.Random`` and fixed dates, so
every build, on SQLite or PostgreSQL, holds exactly the same rows.
"""

import hashlib
import json
import random
import secrets
import sqlite3
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from urllib.parse import quote, urlparse, urlunparse

import psycopg
from django.conf import settings
from psycopg import sql

from probes.models import Dialect, Warehouse
from probes.postgres_limits import role_statements
from probes.warehouses import warehouse_role_check_or_refuse, write_secrets_file

DEMO_WAREHOUSE_NAME = "demo"
DEMO_SEED = 20240601
ORDER_COUNT = 3000
CUSTOMER_COUNT = 600
FIRST_ORDER_DATE = date(2023, 1, 1)
LAST_ORDER_DATE = date(2024, 12, 31)
CENT = Decimal("0.01")

# Parents before children: the order tables are created and filled in.
TABLES = ["regions", "customers", "products", "orders", "order_items", "payments", "shipments", "daily_sales"]

# Plain DDL that means the same on SQLite and PostgreSQL. Dates are DATE (ISO text in SQLite).
SCHEMA = {
    "regions": """
        CREATE TABLE regions (
            region_id INTEGER PRIMARY KEY,
            region_name TEXT NOT NULL,
            country TEXT NOT NULL
        )""",
    "customers": """
        CREATE TABLE customers (
            customer_id INTEGER PRIMARY KEY,
            customer_name TEXT NOT NULL,
            email TEXT NOT NULL UNIQUE,
            region_id INTEGER NULL REFERENCES regions (region_id),
            signup_date DATE NOT NULL
        )""",
    "products": """
        CREATE TABLE products (
            product_id INTEGER PRIMARY KEY,
            product_name TEXT NOT NULL,
            category TEXT NOT NULL,
            list_price NUMERIC(10, 2) NOT NULL,
            is_active BOOLEAN NOT NULL
        )""",
    "orders": """
        CREATE TABLE orders (
            order_id INTEGER PRIMARY KEY,
            customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
            order_date DATE NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('completed', 'pending', 'cancelled', 'refunded')),
            shipped_date DATE NULL,
            order_total NUMERIC(10, 2) NOT NULL
        )""",
    "order_items": """
        CREATE TABLE order_items (
            order_item_id INTEGER PRIMARY KEY,
            order_id INTEGER NOT NULL REFERENCES orders (order_id),
            product_id INTEGER NOT NULL REFERENCES products (product_id),
            quantity INTEGER NOT NULL,
            unit_price NUMERIC(10, 2) NOT NULL,
            discount NUMERIC(4, 2) NOT NULL
        )""",
    "payments": """
        CREATE TABLE payments (
            payment_id INTEGER PRIMARY KEY,
            order_id INTEGER NOT NULL REFERENCES orders (order_id),
            method TEXT NOT NULL,
            amount NUMERIC(10, 2) NOT NULL
        )""",
    "shipments": """
        CREATE TABLE shipments (
            shipment_id INTEGER PRIMARY KEY,
            order_id INTEGER NOT NULL REFERENCES orders (order_id),
            carrier TEXT NOT NULL,
            shipped_at DATE NOT NULL
        )""",
    "daily_sales": """
        CREATE TABLE daily_sales (
            sales_date DATE PRIMARY KEY,
            orders_count INTEGER NOT NULL,
            items_sold INTEGER NOT NULL,
            revenue NUMERIC(12, 2) NOT NULL
        )""",
}

# Foreign-key columns are indexed, as in a real warehouse: correlated subqueries stay fast.
INDEXES = [
    "CREATE INDEX customers_region_id_idx ON customers (region_id)",
    "CREATE INDEX orders_customer_id_idx ON orders (customer_id)",
    "CREATE INDEX order_items_order_id_idx ON order_items (order_id)",
    "CREATE INDEX order_items_product_id_idx ON order_items (product_id)",
    "CREATE INDEX payments_order_id_idx ON payments (order_id)",
    "CREATE INDEX shipments_order_id_idx ON shipments (order_id)",
]

PRIMARY_KEYS = {
    "regions": "region_id",
    "customers": "customer_id",
    "products": "product_id",
    "orders": "order_id",
    "order_items": "order_item_id",
    "payments": "payment_id",
    "shipments": "shipment_id",
    "daily_sales": "sales_date",
}

REGIONS = [
    (1, "Northeast", "US"),
    (2, "Southeast", "US"),
    (3, "Midwest", "US"),
    (4, "West", "US"),
    (5, "Ontario", "CA"),
    (6, "Quebec", "CA"),
    (7, "British Isles", "UK"),
    (8, "Bavaria", "DE"),
]

FIRST_NAMES = [
    "Alice", "Bruno", "Carmen", "Daniel", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    "Keiko", "Liam", "Maya", "Noah", "Olga", "Pedro", "Quinn", "Rosa", "Samir", "Tara",
    "Umar", "Vera", "Wen", "Xavier", "Yara", "Zoe", "Amir", "Beatriz", "Chen", "Dara",
]  # fmt: skip
LAST_NAMES = [
    "Anders", "Baker", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen",
    "Kowalski", "Lopez", "Moreau", "Nakamura", "Okafor", "Patel", "Quintero", "Rossi", "Schmidt", "Tanaka",
    "Ueda", "Varga", "Weber", "Xu", "Yilmaz", "Zimmer",
]  # fmt: skip

CATEGORIES = {
    "Electronics": ["Headphones", "Charger", "Webcam", "Keyboard", "Monitor", "Speaker", "Mouse", "Tablet Case"],
    "Home": ["Desk Lamp", "Throw Blanket", "Coffee Mug", "Plant Pot", "Wall Clock", "Cutting Board", "Kettle"],
    "Books": ["Cookbook", "Travel Guide", "Novel", "SQL Handbook", "Atlas", "Poetry Collection"],
    "Toys": ["Puzzle", "Building Blocks", "Board Game", "Plush Bear", "Kite", "Yo-yo"],
    "Sports": ["Yoga Mat", "Water Bottle", "Running Socks", "Dumbbell Set", "Tennis Balls", "Jump Rope"],
    "Beauty": ["Face Cream", "Shampoo", "Lip Balm", "Hand Soap", "Sunscreen"],
    "Grocery": ["Green Tea", "Dark Chocolate", "Olive Oil", "Coffee Beans", "Honey", "Granola"],
}
PRICE_RANGES = {
    "Electronics": (15, 250),
    "Home": (8, 90),
    "Books": (9, 45),
    "Toys": (6, 60),
    "Sports": (5, 80),
    "Beauty": (4, 40),
    "Grocery": (3, 25),
}
STATUS_WEIGHTS = {"completed": 70, "pending": 9, "cancelled": 13, "refunded": 8}
PAYMENT_METHODS = ["card", "card", "card", "paypal", "gift_card", "bank_transfer"]
CARRIERS = ["UPS", "FedEx", "DHL", "USPS"]
DISCOUNTS = ["0.00", "0.00", "0.00", "0.00", "0.05", "0.10", "0.15", "0.20"]
# Most lines sell at list price; the rest are promotions or price changes since the order.
PRICE_FACTORS = ["1.00", "1.00", "1.00", "1.00", "1.00", "0.90", "0.85", "0.95", "1.05", "1.10"]


def money(value) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def random_date(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randint(0, (last - first).days))


def _customers(rng):
    names = [f"{first} {last}" for first in FIRST_NAMES for last in LAST_NAMES]
    rng.shuffle(names)
    rows = []
    for customer_id, name in enumerate(names[:CUSTOMER_COUNT], start=1):
        # About one customer in twelve never told us where they live.
        region_id = None if rng.random() < 0.08 else rng.randint(1, len(REGIONS))
        email = f"{name.lower().replace(' ', '.')}.{customer_id}@example.com"
        signup = random_date(rng, date(2021, 6, 1), date(2024, 6, 30))
        rows.append((customer_id, name, email, region_id, signup))
    return rows


def _products(rng):
    rows = []
    product_id = 0
    for category, names in CATEGORIES.items():
        low, high = PRICE_RANGES[category]
        for name in names:
            product_id += 1
            list_price = money(Decimal(rng.randint(low * 100, high * 100)) / 100)
            is_active = rng.random() >= 0.15
            rows.append((product_id, name, category, list_price, is_active))
    return rows


def _split(rng, total: Decimal, parts: int) -> list[Decimal]:
    """Split an amount into `parts` positive cent amounts that add up exactly."""
    cents = int(total / CENT)
    if cents < parts:
        return [total]
    cuts = sorted(rng.sample(range(1, cents), parts - 1))
    bounds = [0, *cuts, cents]
    return [Decimal(b - a) * CENT for a, b in zip(bounds, bounds[1:], strict=False)]


def demo_warehouse_rows(seed: int = DEMO_SEED) -> dict[str, list[tuple]]:
    """Generate every table's rows, deterministically from `seed`, parents first."""
    rng = random.Random(seed)
    customers = _customers(rng)
    products = _products(rng)
    statuses = list(STATUS_WEIGHTS)
    weights = list(STATUS_WEIGHTS.values())
    orders, items, payments, shipments = [], [], [], []
    daily = {}
    for order_id in range(1, ORDER_COUNT + 1):
        customer = rng.choice(customers)
        order_date = random_date(rng, max(FIRST_ORDER_DATE, customer[4]), LAST_ORDER_DATE)
        status = rng.choices(statuses, weights)[0]
        total = Decimal("0")
        units = 0
        for product in rng.sample(products, rng.choice([1, 1, 2, 2, 3, 3, 4, 5])):
            quantity = rng.choice([1, 1, 1, 2, 2, 3, 4])
            unit_price = money(product[3] * Decimal(rng.choice(PRICE_FACTORS)))
            discount = Decimal(rng.choice(DISCOUNTS))
            items.append((len(items) + 1, order_id, product[0], quantity, unit_price, discount))
            total += quantity * unit_price * (1 - discount)
            units += quantity
        total = money(total)
        shipped_date = None
        if status in ("completed", "refunded"):
            parcels = rng.choices([1, 2, 3], [78, 17, 5])[0]
            first_ship = order_date + timedelta(days=rng.randint(0, 4))
            for parcel in range(parcels):
                shipped_at = first_ship + timedelta(days=parcel * rng.randint(1, 6))
                shipments.append((len(shipments) + 1, order_id, rng.choice(CARRIERS), shipped_at))
            shipped_date = first_ship
        if status != "cancelled" and not (status == "pending" and rng.random() < 0.5):
            parts = rng.choices([1, 2, 3], [82, 14, 4])[0]
            for amount in _split(rng, total, parts):
                payments.append((len(payments) + 1, order_id, rng.choice(PAYMENT_METHODS), amount))
        orders.append((order_id, customer[0], order_date, status, shipped_date, total))
        if status == "completed":
            day = daily.setdefault(order_date, [0, 0, Decimal("0")])
            day[0] += 1
            day[1] += units
            day[2] += total
    daily_sales = [(day, *figures) for day, figures in sorted(daily.items())]
    return {
        "regions": list(REGIONS),
        "customers": customers,
        "products": products,
        "orders": orders,
        "order_items": items,
        "payments": payments,
        "shipments": shipments,
        "daily_sales": daily_sales,
    }


def is_postgres_target(target) -> bool:
    return str(target).startswith(("postgres://", "postgresql://"))


def sqlite_path(target) -> Path:
    """Turn a path or a ``sqlite:///`` DSN into a filesystem path."""
    text = str(target)
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]
    return Path(text)


def connect_demo_warehouse(target):
    """Open a DB-API connection to a SQLite path/DSN or a PostgreSQL DSN."""
    if is_postgres_target(target):
        return psycopg.connect(str(target))
    return sqlite3.connect(sqlite_path(target))


def _sqlite_value(value):
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return int(value)
    return value


def build_demo_warehouse(target, *, seed: int = DEMO_SEED) -> dict[str, int]:
    """Drop and recreate the demo tables at `target` and fill them; return rows per table.

    `target` is a SQLite file path (or ``sqlite:///`` DSN) or a PostgreSQL DSN. Running it
    again gives the same rows.
    """
    rows = demo_warehouse_rows(seed)
    postgres = is_postgres_target(target)
    if not postgres:
        sqlite_path(target).parent.mkdir(parents=True, exist_ok=True)
    conn = connect_demo_warehouse(target)
    try:
        cursor = conn.cursor()
        if not postgres:
            cursor.execute("PRAGMA foreign_keys = ON")
        for table in reversed(TABLES):
            cursor.execute(f"DROP TABLE IF EXISTS {table}" + (" CASCADE" if postgres else ""))
        placeholder = "%s" if postgres else "?"
        for table in TABLES:
            cursor.execute(SCHEMA[table])
            table_rows = rows[table] if postgres else [tuple(map(_sqlite_value, row)) for row in rows[table]]
            marks = ", ".join([placeholder] * len(table_rows[0]))
            cursor.executemany(f"INSERT INTO {table} VALUES ({marks})", table_rows)
        for statement in INDEXES:
            cursor.execute(statement)
        if postgres:
            cursor.execute("ANALYZE")
        conn.commit()
    finally:
        conn.close()
    return {table: len(table_rows) for table, table_rows in rows.items()}


def demo_warehouse_dsn(target) -> str:
    """Return the DSN Docket stores for `target`: as given for PostgreSQL, absolute for SQLite."""
    if is_postgres_target(target):
        return str(target)
    return f"sqlite:///{sqlite_path(target).resolve()}"


READER_ROLE = "docket_reader"


class ReaderRoleInUse(Exception):
    """The reader role named exists with more than LOGIN: it is not Docket's to change."""


def reader_dsn(admin_dsn: str, role: str, password: str) -> str:
    """Return `admin_dsn` with its user and password replaced by the reader's."""
    parts = urlparse(admin_dsn)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{quote(role, safe='')}:{quote(password, safe='')}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunparse(parts._replace(netloc=netloc))


def create_reader_role(admin_dsn: str, *, role: str = READER_ROLE, tables=TABLES, password: str = "") -> str:
    """Create (or reuse) login role `role` with SELECT on exactly `tables`; return its DSN.

    Run with the DSN that built the tables. The role gets a new random password each time,
    no attribute beyond LOGIN, CONNECT on the database, USAGE on `public` and SELECT on the
    given tables only (`tables=None`: every table of every schema), and the cost settings of
    `probes.postgres_limits` on the role itself (statement_timeout, temp_file_limit, work_mem,
    hash_mem_multiplier, jit = off: `temp_file_limit` needs a superuser); CREATE on `public` is
    taken from PUBLIC (the default before PostgreSQL 15), so the reader passes `probes.role_check`.
    """
    password = password or secrets.token_urlsafe(24)
    attributes = sql.SQL("LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD {}").format(
        sql.Literal(password)
    )
    name = sql.Identifier(role)
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        database = sql.Identifier(conn.info.dbname)
        existing = conn.execute(
            "SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolbypassrls OR rolreplication "
            "OR rolname = session_user FROM pg_roles WHERE rolname = %s",
            [role],
        ).fetchone()
        if existing and existing[0]:
            # Never demote a role someone else uses: a reader is a role of its own.
            raise ReaderRoleInUse(f"role {role!r} exists and can do more than read; name another reader role")
        verb = "ALTER" if existing else "CREATE"
        conn.execute(sql.SQL(verb + " ROLE {} WITH {}").format(name, attributes))
        for statement in role_statements(role):
            conn.execute(statement)
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, name))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(name))
        conn.execute(sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(name))
        conn.execute(sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {}").format(name))
        if tables is None:
            schemas = conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'"
            ).fetchall()
            for (schema,) in schemas:
                conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), name))
                conn.execute(
                    sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(sql.Identifier(schema), name)
                )
            tables = []
        for table in tables:
            conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(table), name))
    return reader_dsn(admin_dsn, role, password)


def register_demo_warehouse(path_or_dsn):
    """Create or update the ``demo`` Warehouse row and write its DSN to WAREHOUSES_FILE.

    The DSN goes only to the JSON file (merged with the names already there, mode 0600),
    never into the database. A PostgreSQL DSN must be a read-only login role (the reader
    from `create_reader_role`): any other is refused by `probes.role_check`.
    """
    dsn = demo_warehouse_dsn(path_or_dsn)
    dialect = Dialect.POSTGRES if is_postgres_target(dsn) else Dialect.SQLITE
    warehouse_role_check_or_refuse(dialect=dialect, dsn=dsn)
    warehouse, _ = Warehouse.objects.update_or_create(
        name=DEMO_WAREHOUSE_NAME,
        defaults={
            "dialect": dialect,
            "description": "Demo e-commerce warehouse (regions, customers, products, orders, items, "
            "payments, shipments, daily_sales) with deliberate traps for LLM SQL.",
        },
    )
    path = Path(settings.WAREHOUSES_FILE)
    known = json.loads(path.read_text()) if path.exists() and path.read_text().strip() else {}
    known[DEMO_WAREHOUSE_NAME] = dsn
    write_secrets_file(path, known)
    return warehouse


def comparable_value(value):
    """Turn a value from either engine into one that compares equal across engines.

    Numbers become floats rounded to 2 decimals (after a 6-decimal round that absorbs
    float noise, so SQLite's binary sums and PostgreSQL's exact NUMERIC agree), dates
    become ISO text and booleans become 1.0/0.0.
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float | Decimal):  # bool too: True is 1.0, as SQLite stores it
        return round(round(float(value), 6), 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def comparable_rows(rows) -> list[tuple]:
    """Return the rows as a sorted list of comparable tuples (order-insensitive comparison)."""
    converted = [tuple(comparable_value(value) for value in row) for row in rows]
    return sorted(converted, key=_sort_key)


def _sort_key(row):
    # None and text never meet in a comparison: the type name decides first.
    return [(value is None, type(value).__name__, 0 if value is None else value) for value in row]


def table_checksums(target) -> dict[str, str]:
    """Return a SHA-256 of each demo table's rows in primary-key order, comparable across engines."""
    conn = connect_demo_warehouse(target)
    try:
        checksums = {}
        for table in TABLES:
            cursor = conn.cursor()
            cursor.execute(f"SELECT * FROM {table} ORDER BY {PRIMARY_KEYS[table]}")
            rows = [tuple(comparable_value(value) for value in row) for row in cursor.fetchall()]
            checksums[table] = hashlib.sha256(repr(rows).encode()).hexdigest()
        return checksums
    finally:
        conn.close()
