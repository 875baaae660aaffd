"""Setting a warehouse up in the browser: the read-only role to create, and "Test connection".

`reader_role_statements` is the SQL a database owner runs to make the least-privilege login
role the role check (`probes/role_check.py`) accepts, with the cost settings of
`probes/postgres_limits.py`; `connection_test` opens the warehouse as Docket would and runs
that same check, returning each finding. Neither ever returns the DSN or its password.
"""

import re
import sqlite3
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

import psycopg
import pymysql

from probes.models import Dialect, Warehouse
from probes.postgres_limits import role_values
from probes.warehouses import (
    ROLE_CHECKED,
    WarehousesFileInvalid,
    WarehouseUnavailable,
    dsn_env_var,
    dsn_in_environment,
    login_role_check,
    open_sqlite_readonly,
    warehouse_dsn,
)

DEFAULT_READER_ROLE = "docket_reader"
PASSWORD_PLACEHOLDER = "choose-a-password"
_PLAIN_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def _identifier(name: str) -> str:
    """A PostgreSQL identifier as written in the statements: bare when it can be, else quoted."""
    return name if _PLAIN_NAME.match(name) else '"' + name.replace('"', '""') + '"'


def dsn_role_and_database(dsn: str | None) -> tuple[str, str]:
    """The login role and database a PostgreSQL DSN names (defaults when it names none)."""
    parts = urlparse(dsn or "")
    return unquote(parts.username or "") or DEFAULT_READER_ROLE, unquote(parts.path.lstrip("/")) or "warehouse"


def reader_role_statements(role: str = DEFAULT_READER_ROLE, database: str = "warehouse") -> list[str]:
    """The statements that make `role` a login role that may only read (run as a superuser)."""
    name = _identifier(role)
    settings_lines = [f"ALTER ROLE {name} SET {setting} = '{value}';" for setting, value in role_values().items()]
    return [
        f"CREATE ROLE {name} LOGIN PASSWORD '{PASSWORD_PLACEHOLDER}' "
        "NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;",
        *settings_lines,
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC;",
        f"GRANT CONNECT ON DATABASE {_identifier(database)} TO {name};",
        f"GRANT USAGE ON SCHEMA public TO {name};",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {name};",
    ]


def warehouse_reader_statements(warehouse: Warehouse) -> list[str]:
    """The statements for this warehouse's own login role and database (PostgreSQL only)."""
    if warehouse.dialect != Dialect.POSTGRES:
        return []
    try:
        dsn = warehouse_dsn(warehouse)
    except WarehouseUnavailable:
        dsn = None
    return reader_role_statements(*dsn_role_and_database(dsn))


@dataclass
class ConnectionTest:
    """What "Test connection" found: connected or not, and every way the role can do more than read."""

    connected: bool
    login_role: str = ""
    findings: list[str] = field(default_factory=list)
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.connected and not self.findings


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def connection_test(warehouse: Warehouse) -> ConnectionTest:
    """Open the warehouse as Docket does and run the role check; never raises for a bad connection."""
    try:
        dsn = warehouse_dsn(warehouse)
        if warehouse.dialect in ROLE_CHECKED:
            check = login_role_check(warehouse.dialect, dsn)
            message = "can only read" if check.safe else "can do more than read: nothing from a model runs here"
            return ConnectionTest(True, check.login_role, list(check.findings), message)
        if warehouse.dialect != Dialect.SQLITE:
            return ConnectionTest(
                False,
                message=f"no connection test for {warehouse.get_dialect_display()} yet: "
                "refresh the catalogue to reach it",
            )
        conn = open_sqlite_readonly(dsn)
        try:
            tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view')").fetchone()[0]
        finally:
            conn.close()
        return ConnectionTest(True, message=f"opened read-only; {tables} tables and views (a file has no role)")
    except WarehouseUnavailable as exc:
        return ConnectionTest(False, message=str(exc))
    except (psycopg.Error, pymysql.Error, sqlite3.Error, OSError) as exc:
        return ConnectionTest(False, message=f"could not connect: {_first_line(exc)}")


def dsn_source(warehouse: Warehouse | None) -> str:
    """Say where the warehouse's DSN comes from, never what it is."""
    if warehouse is None or not warehouse.name:
        return "register it with its connection URL on the Warehouses page (Register a warehouse)"
    if dsn_in_environment(warehouse.name):
        return f"environment ({dsn_env_var(warehouse.name)})"
    try:
        warehouse_dsn(warehouse)
    except WarehousesFileInvalid as exc:
        return f"unreadable warehouses file: {exc}"
    except WarehouseUnavailable:
        return f"missing: set {dsn_env_var(warehouse.name)} or add {warehouse.name!r} to the warehouses file"
    return "warehouses file"
