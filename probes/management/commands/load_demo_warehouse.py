"""Build the demo warehouse (SQLite file by default, PostgreSQL or MySQL / MariaDB) and register it as `demo`."""

from pathlib import Path

import psycopg
import pymysql
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from probes.demo_warehouse import (
    READER_ROLE,
    ReaderRoleInUse,
    build_demo_warehouse,
    create_reader_role,
    register_demo_warehouse,
)
from probes.duckdb_warehouse import build_duckdb_demo
from probes.models import Dialect
from probes.mysql_demo import build_mysql_demo, create_mysql_reader, register_mysql_demo
from probes.role_check import UnsafeWarehouseRole
from probes.warehouses import warehouse_register


class Command(BaseCommand):
    help = "Build the demo e-commerce warehouse (drops and recreates its tables) and register it as `demo`."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group()
        target.add_argument("--path", help="SQLite file to build (default: VAR_DIR/demo_warehouse.sqlite3).")
        target.add_argument("--duckdb", metavar="PATH", help="DuckDB file to build (replaced if it exists).")
        target.add_argument(
            "--dsn", help="PostgreSQL (postgresql://) or MySQL / MariaDB (mysql://) DSN of an existing database."
        )
        parser.add_argument(
            "--reader-role",
            default=READER_ROLE,
            help="Login role (PostgreSQL) or login (MySQL) created (or reused) with SELECT on the demo tables "
            f"only; its DSN is "
            f"the one registered (default {READER_ROLE}).",
        )
        parser.add_argument(
            "--no-register", action="store_true", help="Build only; leave the Warehouse row and the DSN file alone."
        )

    def handle(self, *args, path=None, dsn=None, no_register=False, reader_role=READER_ROLE, **options):
        if options.get("duckdb"):
            return self.duckdb(options["duckdb"], no_register=no_register)
        if dsn and dsn.startswith(("mysql://", "mariadb://")):
            return self.mysql(dsn, no_register=no_register, reader=reader_role)
        if dsn and not dsn.startswith(("postgres://", "postgresql://")):
            raise CommandError(f"--dsn must be a PostgreSQL or MySQL DSN, got {dsn.split('@')[-1]!r}")
        target = dsn or path or str(settings.VAR_DIR / "demo_warehouse.sqlite3")
        counts = build_demo_warehouse(target)
        where = "PostgreSQL at " + dsn.split("@")[-1] if dsn else target
        summary = ", ".join(f"{table} {count}" for table, count in counts.items())
        self.stdout.write(f"demo warehouse built in {where}: {summary}")
        if no_register:
            return
        if dsn:
            try:
                target = create_reader_role(dsn, role=reader_role)
            except ReaderRoleInUse as exc:
                raise CommandError(str(exc)) from exc
            except psycopg.errors.InsufficientPrivilege as exc:
                # ALTER ROLE ... SET temp_file_limit (a cost limit the role must carry) needs one.
                raise CommandError(f"--dsn must be a superuser's to give the reader its limits: {exc}") from exc
            self.stdout.write(f"login role {reader_role} may SELECT the demo tables and nothing else")
        try:
            register_demo_warehouse(target)
        except UnsafeWarehouseRole as exc:
            raise CommandError(str(exc)) from exc
        who = f"login role {reader_role}" if dsn else "the file"
        self.stdout.write(f"registered as `demo` with {who} (DSN in {settings.WAREHOUSES_FILE})")

    def mysql(self, dsn: str, *, no_register: bool, reader: str) -> None:
        where = dsn.split("@")[-1]
        try:
            counts = build_mysql_demo(dsn)
            self.stdout.write(
                f"demo warehouse built in MySQL at {where}: " + ", ".join(f"{t} {n}" for t, n in counts.items())
            )
            if no_register:
                return
            reader_dsn = create_mysql_reader(dsn, login=reader)
            self.stdout.write(f"login {reader} may SELECT the demo tables and nothing else")
            register_mysql_demo(reader_dsn)
        except (ReaderRoleInUse, UnsafeWarehouseRole) as exc:
            raise CommandError(str(exc)) from exc
        except pymysql.Error as exc:
            raise CommandError(f"MySQL at {where}: {exc.args[-1] if exc.args else exc}") from exc
        self.stdout.write(f"registered as `demo` with login {reader} (DSN in {settings.WAREHOUSES_FILE})")

    def duckdb(self, path: str, *, no_register: bool) -> None:
        target = Path(path).resolve()
        counts = build_duckdb_demo(str(target))
        self.stdout.write(
            f"demo warehouse built in DuckDB at {target}: " + ", ".join(f"{t} {n}" for t, n in counts.items())
        )
        if not no_register:
            warehouse_register(
                name="demo",
                dialect=Dialect.DUCKDB,
                dsn=f"duckdb:///{target}",
                description="Demo e-commerce warehouse as a DuckDB file, opened read-only without external access.",
            )
            self.stdout.write(f"registered as `demo` (DSN in {settings.WAREHOUSES_FILE})")
