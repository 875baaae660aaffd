"""Warehouses for the probes tests: the shop schema on SQLite and PostgreSQL, and defog."""

import os
import uuid

import psycopg
import pytest
from psycopg import sql

from probes import defog
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import create_reader_role
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


def unique_name(prefix: str) -> str:
    """A database or role name no other test process on the server uses (roles are cluster-wide)."""
    return f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


def drop_role(admin_dsn: str, role: str) -> None:
    """Drop a role this run created (its databases are dropped first, so it owns nothing)."""
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.fixture(scope="session")
def shop_postgres_dsns():
    """(owner DSN, reader DSN) of a fresh shop database; the reader may only SELECT its tables."""
    admin = require_postgres_server()
    database = unique_name("probes_shop")
    reader_role = unique_name("probes_reader")
    owner_dsn = shop.create_postgres(admin, database)
    reader = create_reader_role(owner_dsn, role=reader_role, tables=shop.TABLES)
    yield owner_dsn, reader
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
    drop_role(admin, reader_role)


@pytest.fixture(scope="session")
def shop_postgres_dsn(shop_postgres_dsns):
    """The owner's (superuser's) DSN of the shop database: for checking it from outside."""
    return shop_postgres_dsns[0]


@pytest.fixture
def shop_postgres(db, shop_postgres_dsns, monkeypatch):
    """The shop on PostgreSQL, registered with its reader's DSN; `.dsn` is the owner's."""
    owner_dsn, reader = shop_postgres_dsns
    warehouse = register(monkeypatch, "shop-pg", "postgres", reader)
    warehouse.dsn = owner_dsn
    warehouse.reader_dsn = reader
    return warehouse


# Key of the PostgreSQL advisory lock held while the defog databases are checked or loaded.
DEFOG_LOAD_LOCK = 0x6465666F67  # "defog" in ASCII


@pytest.fixture(scope="session")
def defog_postgres_dsns():
    """Reader DSNs of every defog schema loaded into `probes_<db>` (reused while unchanged)."""
    if not defog.available():
        pytest.skip("the defog data set is not on this machine")

    admin = require_postgres_server()
    # The databases are shared by every test process on the server (pytest-xdist's, another
    # checkout's): one loads a missing or stale one while the others wait, then reuse it.
    # The reader is this run's own, granted in each database and dropped after. Its grants and
    # their removal are made under the lock too: two runs granting on the same shared schema at
    # once fail with "tuple concurrently updated" (seen when two checkouts ran at the same time).
    role, password = unique_name("probes_defog_reader"), uuid.uuid4().hex
    with psycopg.connect(admin, autocommit=True) as lock:
        lock.execute("SELECT pg_advisory_lock(%s)", [DEFOG_LOAD_LOCK])
        owners = {db: defog.load_postgres(db, admin) for db in defog.DATABASES}
        readers = {db: create_reader_role(dsn, role=role, tables=None, password=password) for db, dsn in owners.items()}
    yield readers
    with psycopg.connect(admin, autocommit=True) as lock:
        lock.execute("SELECT pg_advisory_lock(%s)", [DEFOG_LOAD_LOCK])
        for dsn in owners.values():
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        drop_role(admin, role)


# The defog schemas whose PostgreSQL DDL sqlglot translates to SQLite in full.
SQLITE_DEFOG = ("academic", "restaurants", "scholar", "yelp")


@pytest.fixture(scope="session")
def defog_sqlite_dsns(tmp_path_factory):
    if not defog.available():
        pytest.skip("the defog data set is not on this machine")
    directory = tmp_path_factory.mktemp("defog")
    return {db: defog.load_sqlite(db, directory) for db in SQLITE_DEFOG}
