"""Warehouses for the probes tests: the shop schema on SQLite and PostgreSQL, and defog."""

import os
import uuid

import pytest

from probes import defog
from probes.catalogue import catalogue_refresh
from probes.tests import shop
from probes.warehouses import dsn_env_var, warehouse_register
from tests.support.services import require_postgres_server


@pytest.fixture(autouse=True)
def private_warehouses_file(settings, tmp_path):
    """Never let a test write the real secrets file."""
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"


def register(monkeypatch, name, dialect, dsn, **kwargs):
    monkeypatch.setenv(dsn_env_var(name), dsn)
    warehouse = warehouse_register(name=name, dialect=dialect, **kwargs)
    catalogue_refresh(warehouse=warehouse)
    return warehouse


@pytest.fixture
def shop_sqlite(db, tmp_path, monkeypatch):
    """A registered SQLite shop warehouse with a catalogue; `.path` is its file."""
    path = tmp_path / "shop.sqlite3"
    warehouse = register(monkeypatch, "shop", "sqlite", shop.create_sqlite(path))
    warehouse.path = path
    return warehouse


@pytest.fixture(scope="session")
def shop_postgres_dsn():
    import psycopg
    from psycopg import sql

    admin = require_postgres_server()
    database = f"probes_shop_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    yield shop.create_postgres(admin, database)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


@pytest.fixture
def shop_postgres(db, shop_postgres_dsn, monkeypatch):
    warehouse = register(monkeypatch, "shop-pg", "postgres", shop_postgres_dsn)
    warehouse.dsn = shop_postgres_dsn
    return warehouse


# Key of the PostgreSQL advisory lock held while the defog databases are checked or loaded.
DEFOG_LOAD_LOCK = 0x6465666F67  # "defog" in ASCII


@pytest.fixture(scope="session")
def defog_postgres_dsns():
    """Every defog schema loaded into `probes_<db>` (reused while the schema file is unchanged)."""
    if not defog.available():
        pytest.skip("the defog data set is not on this machine")
    import psycopg

    admin = require_postgres_server()
    # The databases are shared by every test process on the server (pytest-xdist's, another
    # checkout's): one loads a missing or stale one while the others wait, then reuse it.
    with psycopg.connect(admin, autocommit=True) as lock:
        lock.execute("SELECT pg_advisory_lock(%s)", [DEFOG_LOAD_LOCK])
        return {db: defog.load_postgres(db, admin) for db in defog.DATABASES}


# The defog schemas whose PostgreSQL DDL sqlglot translates to SQLite in full.
SQLITE_DEFOG = ("academic", "restaurants", "scholar", "yelp")


@pytest.fixture(scope="session")
def defog_sqlite_dsns(tmp_path_factory):
    if not defog.available():
        pytest.skip("the defog data set is not on this machine")
    directory = tmp_path_factory.mktemp("defog")
    return {db: defog.load_sqlite(db, directory) for db in SQLITE_DEFOG}
