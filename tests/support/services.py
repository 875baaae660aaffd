"""Which real services a test needs, and what happens when one is missing.

Outside CI a missing service skips the test with the reason. Under CI=true it fails it:
a green CI must mean the test really ran against the real thing.
"""

import os
import socket

import psycopg
import pytest
import redis
from django.conf import settings


def running_in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def database_is_postgres() -> bool:
    return "postgresql" in settings.DATABASES["default"]["ENGINE"]


def port_is_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require(condition: bool, what: str) -> None:
    """Skip (locally) or fail (under CI=true) when a needed service is missing."""
    if condition:
        return
    message = f"{what} is not available"
    if running_in_ci():
        pytest.fail(f"{message} (CI=true: a missing service fails the test)")
    pytest.skip(message)


def postgres_dsn() -> str:
    """DSN of a PostgreSQL server for tests that need one besides the app database."""
    return os.environ.get("TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def require_postgres_server() -> str:
    """Return a PostgreSQL DSN that answers, or skip/fail."""
    dsn = postgres_dsn()
    try:
        with psycopg.connect(dsn, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        ok = True
    except Exception:  # noqa: BLE001 - any failure means "not available"
        ok = False
    require(ok, f"PostgreSQL at {dsn.split('@')[-1]}")
    return dsn


def require_redis() -> str:
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        ok = True
    except Exception:  # noqa: BLE001
        ok = False
    require(ok, f"Redis at {url}")
    return url


def mysql_admin_dsn() -> str:
    """DSN of the MariaDB / MySQL server's administrator (the machine's MariaDB: root, no password)."""
    return os.environ.get("TEST_MYSQL_DSN", "mysql://root@127.0.0.1:3306/test")


def require_mariadb() -> str:
    """Return the MariaDB administrator's DSN if the server answers, else skip (fail under CI=true)."""
    dsn = mysql_admin_dsn()
    host = dsn.split("@")[-1].split("/")[0]
    name, _, port = host.partition(":")
    require(port_is_open(name or "127.0.0.1", int(port or 3306)), f"MariaDB at {host}")
    return dsn
