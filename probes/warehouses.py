"""Where a warehouse's DSN comes from, and how to open a read-only connection to it.

A DSN holds credentials, so it never touches the application database, a form, a page or
a log line: it is read from `WAREHOUSE_<NAME>_URL` or from the JSON secrets file named by
`settings.WAREHOUSES_FILE` each time a connection is opened.
"""

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

import psycopg
import pymysql
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from config.private_files import write_private_file
from probes.models import Dialect, Warehouse
from probes.mysql_grants import mysql_role_check
from probes.postgres_limits import session_options, superuser_statements
from probes.role_check import RoleCheck, UnsafeWarehouseRole, not_applicable, postgres_role_check

# The dialects whose login Docket checks, and the errors that mean "the server is not there yet".
ROLE_CHECKED = {Dialect.POSTGRES: psycopg.OperationalError, Dialect.MYSQL: pymysql.OperationalError}


class WarehouseUnavailable(Exception):
    """The warehouse has no DSN, or its DSN does not match its dialect."""


def dsn_env_var(name: str) -> str:
    return "WAREHOUSE_" + name.upper().replace("-", "_") + "_URL"


class WarehousesFileInvalid(WarehouseUnavailable, ImproperlyConfigured):
    """The secrets file cannot be read as a JSON object: every warehouse it should name is unavailable.

    A WarehouseUnavailable, so every run and preview reports it as a transport error on the
    page (and a fault, never a verdict) instead of failing the request; the message names
    the file and the position, never its contents.
    """


def _secrets_file_entries(path: Path) -> dict:
    """Read the secrets file as {name: DSN} (an empty file holds none); raise WarehousesFileInvalid if unreadable."""
    try:
        text = path.read_bytes().decode("utf-8")
        entries = json.loads(text) if text.strip() else {}
    except UnicodeDecodeError as exc:
        raise WarehousesFileInvalid(f"{path} is not UTF-8 text (byte {exc.start}).") from exc
    except json.JSONDecodeError as exc:
        raise WarehousesFileInvalid(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}).") from exc
    except OSError as exc:
        raise WarehousesFileInvalid(f"{path} cannot be read ({exc.strerror or type(exc).__name__}).") from exc
    if not isinstance(entries, dict):
        raise WarehousesFileInvalid(f"{path} must hold a JSON object mapping warehouse names to DSNs.")
    return entries


def _dsn_from_file(name: str) -> str | None:
    path = Path(settings.WAREHOUSES_FILE)
    if not path.exists():
        return None
    value = _secrets_file_entries(path).get(name)
    return value if isinstance(value, str) and value else None


def dsn_in_environment(name: str) -> bool:
    """Say whether the warehouse's DSN is set in the environment (it wins over the file)."""
    return bool(os.environ.get(dsn_env_var(name)))


def warehouse_dsn(warehouse: Warehouse | str) -> str:
    """Return the warehouse's DSN from the environment, else the secrets file."""
    name = warehouse if isinstance(warehouse, str) else warehouse.name
    dsn = os.environ.get(dsn_env_var(name)) or _dsn_from_file(name)
    if not dsn:
        raise WarehouseUnavailable(
            f"no DSN for warehouse {name!r}: set {dsn_env_var(name)} or add it to the warehouses file"
        )
    return dsn


def write_dsn_to_secrets_file(name: str, dsn: str) -> None:
    """Add or replace one entry of the secrets file, which is only ever readable by its owner."""
    path = Path(settings.WAREHOUSES_FILE)
    entries = _secrets_file_entries(path) if path.exists() else {}
    entries[name] = dsn
    write_secrets_file(path, entries)


def write_secrets_file(path: Path, entries: dict) -> None:
    """Write the secrets file with mode 0600 from its first byte (a new file, then a rename)."""
    write_private_file(path, json.dumps(entries, indent=2, sort_keys=True) + "\n")


def login_role_check(dialect: str, dsn: str) -> RoleCheck:
    """Check the DSN's login now: PostgreSQL's role (`probes.role_check`), MySQL's grants (`probes.mysql_grants`)."""
    return mysql_role_check(dsn) if dialect == Dialect.MYSQL else postgres_role_check(dsn)


def warehouse_role_check_or_refuse(*, dialect: str, dsn: str) -> dict:
    """Check a PostgreSQL or MySQL DSN's login; raise UnsafeWarehouseRole unless it can only read.

    `WAREHOUSE_ALLOW_UNSAFE_ROLE` lets an unsafe role through (the check is still returned).
    """
    if dialect not in ROLE_CHECKED:
        return not_applicable()
    check = login_role_check(dialect, dsn)
    if not check.safe and not settings.WAREHOUSE_ALLOW_UNSAFE_ROLE:
        raise UnsafeWarehouseRole(check)
    return check.as_dict()


@transaction.atomic
def warehouse_register(
    *, name: str, dialect: str, dsn: str | None = None, description: str = "", verifier_rules: dict | None = None
) -> Warehouse:
    """Create or update a warehouse row; a given DSN goes to the secrets file, not the DB.

    A PostgreSQL DSN (given, or already in the environment or the secrets file) is checked
    first: a login role that can do more than read is refused (UnsafeWarehouseRole) and
    nothing is registered. A server that cannot be reached yet is checked later.
    """
    if dialect not in Dialect.values:
        raise ValueError(f"dialect must be one of {', '.join(Dialect.values)}; got {dialect!r}")
    if dsn is not None:
        check_dsn_matches_dialect(dsn, dialect)
    known = dsn
    if known is None:
        try:
            known = warehouse_dsn(name)
        except WarehouseUnavailable:
            known = None  # no DSN yet: checked when one is given and at every catalogue refresh
    if known is not None and dialect in ROLE_CHECKED:
        # Unreachable now: nothing runs on it before a check passes (refresh_catalogue, or
        # the check made before the first run of a never-introspected warehouse).
        with contextlib.suppress(ROLE_CHECKED[dialect]):
            warehouse_role_check_or_refuse(dialect=dialect, dsn=known)
    if dsn is not None:
        write_dsn_to_secrets_file(name, dsn)
    warehouse, _ = Warehouse.objects.get_or_create(name=name, defaults={"dialect": dialect})
    warehouse.dialect = dialect
    warehouse.description = description or warehouse.description
    if verifier_rules is not None:
        warehouse.verifier_rules = verifier_rules
    warehouse.full_clean()
    warehouse.save()
    return warehouse


def check_dsn_matches_dialect(dsn: str, dialect: str) -> None:
    scheme = urlparse(dsn).scheme
    schemes = {
        "sqlite": ("sqlite",),
        "postgres": ("postgres", "postgresql"),
        "mysql": ("mysql", "mariadb"),
        "duckdb": ("duckdb",),
    }
    if dialect not in schemes:
        raise WarehouseUnavailable(
            f"Docket opens no connection to a {dialect} warehouse: import its catalogue from a file"
        )
    expected = schemes[dialect]
    if scheme not in expected:
        raise WarehouseUnavailable(f"a {dialect} warehouse needs a {expected[0]}:// DSN, not {scheme or 'no'} scheme")


def sqlite_path(dsn: str) -> str:
    """Return the file path of `sqlite:////abs/path.sqlite3` (or `sqlite:///rel/path`)."""
    if not dsn.startswith("sqlite:///"):
        raise WarehouseUnavailable("a sqlite warehouse DSN must look like sqlite:////absolute/path.sqlite3")
    return unquote(dsn[len("sqlite:///") :].split("?", 1)[0])


def open_sqlite_readonly(dsn: str, timeout_s: float = 5.0) -> sqlite3.Connection:
    """Open the file read-only (`mode=ro`) with `PRAGMA query_only`; a missing file fails.

    A DSN ending `?immutable=1` (a benchmark's database, `register_warehouses --sqlite-dir`)
    is opened `mode=ro&immutable=1`: SQLite then takes no locks and never looks for a journal,
    so the file may sit on a read-only disk and nobody can change it under a calibration run.
    """
    path = sqlite_path(dsn)
    if not Path(path).exists():
        raise WarehouseUnavailable("the sqlite warehouse file does not exist")
    mode = "mode=ro&immutable=1" if "immutable=1" in urlparse(dsn).query.split("&") else "mode=ro"
    conn = sqlite3.connect(f"file:{quote(path)}?{mode}", uri=True, timeout=timeout_s, check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    return conn


def open_postgres(dsn: str, *, timeout_s: float, planner_limits: bool = False):
    """Open a connection whose every transaction is read-only and time-limited.

    There is no `SET ROLE`: a role set inside a session can be unset from inside it, so the
    login role itself must be the read-only one (`probes.role_check`). With
    `planner_limits`, the planner's search is bounded so that planning a model's query
    cannot outlast the statement timeout. Every connection carries the cost limits of
    `probes.postgres_limits` (work_mem, hash_mem_multiplier, jit off, no parallel workers); a
    superuser's session (only with WAREHOUSE_ALLOW_UNSAFE_ROLE) also sets its own
    temp_file_limit, which a reader role carries itself.
    """
    timeout_ms = max(1, int(timeout_s * 1000))
    parameters = [
        "-c default_transaction_read_only=on",
        f"-c statement_timeout={timeout_ms}",
        f"-c lock_timeout={timeout_ms}",
        f"-c idle_in_transaction_session_timeout={max(timeout_ms * 2, 1000)}",
        *session_options(),
    ]
    if planner_limits:
        collapse = int(settings.WAREHOUSE_PG_COLLAPSE_LIMIT)
        parameters += [
            f"-c join_collapse_limit={collapse}",
            f"-c from_collapse_limit={collapse}",
            f"-c geqo_threshold={int(settings.WAREHOUSE_PG_GEQO_THRESHOLD)}",
        ]
    conn = psycopg.connect(
        dsn, autocommit=False, connect_timeout=max(2, int(timeout_s) + 1), options=" ".join(parameters)
    )
    with conn.cursor() as cursor:
        cursor.execute("SET TRANSACTION READ ONLY")
        if conn.info.parameter_status("is_superuser") == "on":
            for statement in superuser_statements():
                cursor.execute(statement)
    return conn
