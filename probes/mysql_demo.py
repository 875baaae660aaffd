"""The demo warehouse on MySQL / MariaDB, and its `docket_reader` login (issue 34).

`build_mysql_demo` creates the demo tables of `probes.demo_warehouse` (the same rows, the same
keys, foreign keys as table constraints so InnoDB keeps them) in the admin DSN's database;
`create_mysql_reader` creates (or resets) a login with `SELECT` on the demo tables only and
returns its DSN, which `register_mysql_demo` registers as `demo` after the grants check.
"""

import secrets
from urllib.parse import quote, urlparse

import pymysql

from probes.demo_warehouse import DEMO_WAREHOUSE_NAME, READER_ROLE, TABLES, ReaderRoleInUse, demo_warehouse_rows
from probes.models import Dialect, Warehouse
from probes.mysql_grants import grant_findings
from probes.mysql_runner import mysql_parameters
from probes.warehouses import warehouse_register

SCHEMA = {
    "regions": "region_id INT PRIMARY KEY, region_name VARCHAR(100) NOT NULL, country VARCHAR(100) NOT NULL",
    "customers": "customer_id INT PRIMARY KEY, customer_name VARCHAR(200) NOT NULL, "
    "email VARCHAR(255) NOT NULL UNIQUE, region_id INT NULL, signup_date DATE NOT NULL, "
    "FOREIGN KEY (region_id) REFERENCES regions (region_id)",
    "products": "product_id INT PRIMARY KEY, product_name VARCHAR(200) NOT NULL, category VARCHAR(100) NOT NULL, "
    "list_price DECIMAL(10, 2) NOT NULL, is_active BOOLEAN NOT NULL",
    "orders": "order_id INT PRIMARY KEY, customer_id INT NOT NULL, order_date DATE NOT NULL, "
    "status VARCHAR(16) NOT NULL CHECK (status IN ('completed', 'pending', 'cancelled', 'refunded')), "
    "shipped_date DATE NULL, order_total DECIMAL(10, 2) NOT NULL, "
    "FOREIGN KEY (customer_id) REFERENCES customers (customer_id)",
    "order_items": "order_item_id INT PRIMARY KEY, order_id INT NOT NULL, product_id INT NOT NULL, "
    "quantity INT NOT NULL, unit_price DECIMAL(10, 2) NOT NULL, discount DECIMAL(4, 2) NOT NULL, "
    "FOREIGN KEY (order_id) REFERENCES orders (order_id), FOREIGN KEY (product_id) REFERENCES products (product_id)",
    "payments": "payment_id INT PRIMARY KEY, order_id INT NOT NULL, method VARCHAR(32) NOT NULL, "
    "amount DECIMAL(10, 2) NOT NULL, FOREIGN KEY (order_id) REFERENCES orders (order_id)",
    "shipments": "shipment_id INT PRIMARY KEY, order_id INT NOT NULL, carrier VARCHAR(32) NOT NULL, "
    "shipped_at DATE NOT NULL, FOREIGN KEY (order_id) REFERENCES orders (order_id)",
    "daily_sales": "sales_date DATE PRIMARY KEY, orders_count INT NOT NULL, items_sold INT NOT NULL, "
    "revenue DECIMAL(12, 2) NOT NULL",
}
COMMENTS = {"orders": "One row per order; order_total is the sum of its items after discount"}


def _admin(admin_dsn: str):
    return pymysql.connect(**mysql_parameters(admin_dsn), autocommit=True, charset="utf8mb4", local_infile=False)


def build_mysql_demo(admin_dsn: str) -> dict[str, int]:
    """Drop and recreate the demo tables in the DSN's database and fill them; return rows per table."""
    rows = demo_warehouse_rows()
    conn = _admin(admin_dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SET FOREIGN_KEY_CHECKS = 0")
            for table in reversed(TABLES):
                cursor.execute(f"DROP TABLE IF EXISTS `{table}`")
            cursor.execute("SET FOREIGN_KEY_CHECKS = 1")
            for table in TABLES:
                comment = COMMENTS.get(table, "").replace("'", "''")
                cursor.execute(f"CREATE TABLE `{table}` ({SCHEMA[table]}) ENGINE=InnoDB COMMENT='{comment}'")
                marks = ", ".join(["%s"] * len(rows[table][0]))
                cursor.executemany(f"INSERT INTO `{table}` VALUES ({marks})", rows[table])
            cursor.execute("ANALYZE TABLE " + ", ".join(f"`{table}`" for table in TABLES))
            cursor.fetchall()
    finally:
        conn.close()
    return {table: len(table_rows) for table, table_rows in rows.items()}


def create_mysql_reader(admin_dsn: str, *, login: str = READER_ROLE, tables=TABLES, password: str = "") -> str:
    """Create or reset `login` with SELECT on the demo tables only; return its DSN.

    An existing login that can do more than read is someone else's: refused (ReaderRoleInUse).
    """
    password = password or secrets.token_urlsafe(18)
    parameters = mysql_parameters(admin_dsn)
    database = parameters["database"]
    conn = _admin(admin_dsn)
    user = f"'{login}'@'%'"
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM mysql.user WHERE User = %s AND Host = '%%'", [login])
            if cursor.fetchone()[0]:
                cursor.execute(f"SHOW GRANTS FOR {user}")
                held = [f for (line,) in cursor.fetchall() for f in grant_findings(line)[0]]
                if held:
                    raise ReaderRoleInUse(f"login {login!r} exists and can do more than read ({'; '.join(held)})")
                cursor.execute(f"ALTER USER {user} IDENTIFIED BY {conn.escape(password)}")
                cursor.execute(f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM {user}")
            else:
                cursor.execute(f"CREATE USER {user} IDENTIFIED BY {conn.escape(password)}")
            for table in tables:
                cursor.execute(f"GRANT SELECT ON `{database}`.`{table}` TO {user}")
    finally:
        conn.close()
    parts = urlparse(admin_dsn)
    host = parts.hostname or "127.0.0.1"
    return f"mysql://{quote(login)}:{quote(password)}@{host}:{parts.port or 3306}/{quote(database)}"


def register_mysql_demo(dsn: str, name: str = DEMO_WAREHOUSE_NAME) -> Warehouse:
    """Register the demo warehouse with the reader's DSN (refused, UnsafeWarehouseRole, for any other login)."""
    return warehouse_register(
        name=name,
        dialect=Dialect.MYSQL,
        dsn=dsn,
        description="Demo e-commerce warehouse on MySQL / MariaDB, read by a login with SELECT on its tables only.",
    )
