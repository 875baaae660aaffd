"""Introspect a warehouse into a versioned Catalogue snapshot.

Snapshot shape (JSON): {"dialect": ..., "tables": {name: {"kind": "table"|"view",
"columns": [{"name", "type", "nullable"}], "primary_key": [...], "unique": [[...]],
"foreign_keys": [{"columns", "ref_table", "ref_columns"}], "row_estimate": n}}}.
PostgreSQL tables outside `public` are named `schema.table`.

The catalogue is what the grant allows (issue 27): on PostgreSQL only the relations the login
role may SELECT from (or some of whose columns it may), only the columns it may SELECT, and
only the keys and foreign keys wholly made of those; a SQLite file is read whole. Docket
introspects through its own connection (never the path model SQL takes, whose authorizer
refuses `sqlite_master`).
"""

from django.conf import settings
from django.db import transaction
from psycopg import sql as pgsql

from probes.catalogue_samples import snapshot_add_samples
from probes.duckdb_warehouse import introspect_duckdb
from probes.models import REFRESH_STEPS, Catalogue, Dialect, Warehouse
from probes.mysql_catalogue import introspect_mysql
from probes.role_check import RoleCheck, UnsafeWarehouseRole, not_applicable
from probes.warehouses import (
    ROLE_CHECKED,
    WarehouseUnavailable,
    login_role_check,
    open_postgres,
    open_sqlite_readonly,
    warehouse_dsn,
)


def _quote_sqlite(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def introspect_sqlite(dsn: str) -> dict:
    conn = open_sqlite_readonly(dsn)
    try:
        tables = {}
        rows = conn.execute(
            "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        ).fetchall()
        for name, kind in rows:
            quoted = _quote_sqlite(name)
            info = conn.execute(f"PRAGMA table_info({quoted})").fetchall()
            columns = [{"name": c[1], "type": (c[2] or "").lower(), "nullable": not c[3] and not c[5]} for c in info]
            primary_key = [c[1] for c in sorted((c for c in info if c[5]), key=lambda c: c[5])]
            unique = []
            for index in conn.execute(f"PRAGMA index_list({quoted})").fetchall():
                if index[2]:  # unique
                    cols = [r[2] for r in conn.execute(f"PRAGMA index_info({_quote_sqlite(index[1])})").fetchall()]
                    if cols and cols != primary_key and None not in cols:
                        unique.append(cols)
            foreign_keys = {}
            for fk in conn.execute(f"PRAGMA foreign_key_list({quoted})").fetchall():
                entry = foreign_keys.setdefault(fk[0], {"columns": [], "ref_table": fk[2], "ref_columns": []})
                entry["columns"].append(fk[3])
                entry["ref_columns"].append(fk[4])
            row_estimate = conn.execute(f"SELECT COUNT(*) FROM {quoted}").fetchone()[0] if kind == "table" else None
            tables[name] = {
                "kind": kind,
                "columns": columns,
                "primary_key": primary_key,
                "unique": unique,
                "foreign_keys": list(foreign_keys.values()),
                "row_estimate": row_estimate,
            }
        return {"dialect": "sqlite", "tables": tables}
    finally:
        conn.close()


PG_COLUMNS = """
SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.is_nullable = 'YES'
FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') AND c.table_schema NOT LIKE 'pg_toast%'
  AND has_column_privilege(quote_ident(c.table_schema) || '.' || quote_ident(c.table_name), c.column_name, 'SELECT')
ORDER BY c.table_schema, c.table_name, c.ordinal_position
"""
PG_TABLES = """
SELECT n.nspname, c.relname, c.relkind, c.reltuples::bigint, has_table_privilege(c.oid, 'SELECT')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
  AND has_schema_privilege(n.oid, 'USAGE')
  AND (has_table_privilege(c.oid, 'SELECT') OR has_any_column_privilege(c.oid, 'SELECT'))
"""
PG_CONSTRAINTS = """
SELECT n.nspname, rel.relname, con.contype,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord),
       fn.nspname, frel.relname,
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord)
FROM pg_constraint con
JOIN pg_class rel ON rel.oid = con.conrelid
JOIN pg_namespace n ON n.oid = rel.relnamespace
LEFT JOIN pg_class frel ON frel.oid = con.confrelid
LEFT JOIN pg_namespace fn ON fn.oid = frel.relnamespace
WHERE con.contype IN ('p', 'u', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY n.nspname, rel.relname, con.conname
"""
# Unique indexes that are not constraints (CREATE UNIQUE INDEX) also make a key unique.
PG_UNIQUE_INDEXES = """
SELECT n.nspname, rel.relname,
       ARRAY(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum ORDER BY k.ord)
FROM pg_index ix
JOIN pg_class rel ON rel.oid = ix.indrelid
JOIN pg_namespace n ON n.oid = rel.relnamespace
WHERE ix.indisunique AND NOT ix.indisprimary AND ix.indpred IS NULL AND ix.indexprs IS NULL
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
"""


def _pg_name(schema: str, table: str) -> str:
    return table if schema == "public" else f"{schema}.{table}"


def introspect_postgres(dsn: str) -> dict:
    conn = open_postgres(dsn, timeout_s=settings.WAREHOUSE_STATEMENT_TIMEOUT_S * 4)
    try:
        tables: dict[str, dict] = {}
        with conn.cursor() as cursor:
            kinds = {"r": "table", "p": "table", "v": "view", "m": "view", "f": "table"}
            for schema, name, relkind, reltuples, whole in cursor.execute(PG_TABLES).fetchall():
                tables[_pg_name(schema, name)] = {
                    "kind": kinds[relkind],
                    "columns": [],
                    "primary_key": [],
                    "unique": [],
                    "foreign_keys": [],
                    "row_estimate": None if reltuples is None or reltuples < 0 else int(reltuples),
                    "_schema": schema,
                    "_name": name,
                    "_whole": whole,
                }
            for schema, table, column, data_type, nullable in cursor.execute(PG_COLUMNS).fetchall():
                entry = tables.get(_pg_name(schema, table))
                if entry is not None:
                    entry["columns"].append({"name": column, "type": data_type, "nullable": bool(nullable)})
            for schema, table, kind, cols, ref_schema, ref_table, ref_cols in cursor.execute(PG_CONSTRAINTS).fetchall():
                entry = tables.get(_pg_name(schema, table))
                if entry is None:
                    continue
                if kind == "p":
                    entry["primary_key"] = list(cols)
                elif kind == "u":
                    entry["unique"].append(list(cols))
                else:
                    entry["foreign_keys"].append(
                        {
                            "columns": list(cols),
                            "ref_table": _pg_name(ref_schema, ref_table),
                            "ref_columns": list(ref_cols),
                        }
                    )
            for schema, table, cols in cursor.execute(PG_UNIQUE_INDEXES).fetchall():
                entry = tables.get(_pg_name(schema, table))
                if entry is not None and list(cols) not in entry["unique"]:
                    entry["unique"].append(list(cols))
            # Never-analysed tables report -1 tuples: count them (under the statement timeout).
            for entry in tables.values():
                if entry["row_estimate"] in (None, 0) and entry["kind"] == "table" and entry["_whole"]:
                    query = pgsql.SQL("SELECT COUNT(*) FROM {}.{}").format(
                        pgsql.Identifier(entry["_schema"]), pgsql.Identifier(entry["_name"])
                    )
                    entry["row_estimate"] = cursor.execute(query).fetchone()[0]
        for entry in tables.values():
            for key in ("_schema", "_name", "_whole"):
                entry.pop(key)
        return {"dialect": "postgres", "tables": dict(sorted(within_grant(tables).items()))}
    finally:
        conn.rollback()
        conn.close()


def within_grant(tables: dict[str, dict]) -> dict[str, dict]:
    """Keep keys and foreign keys only when every column they name is one the role may read.

    A key over a column outside a column grant, or a foreign key to a table the role may not
    read, would name what the grant hides.
    """
    readable = {name: {c["name"] for c in entry["columns"]} for name, entry in tables.items()}
    for name, entry in tables.items():
        visible = readable[name]
        if not set(entry["primary_key"]) <= visible:
            entry["primary_key"] = []
        entry["unique"] = [key for key in entry["unique"] if set(key) <= visible]
        entry["foreign_keys"] = [
            fk
            for fk in entry["foreign_keys"]
            if set(fk["columns"]) <= visible and set(fk["ref_columns"]) <= readable.get(fk["ref_table"], set())
        ]
    return tables


def introspect(warehouse: Warehouse) -> dict:
    dsn = warehouse_dsn(warehouse)
    if warehouse.dialect == Dialect.POSTGRES:
        return introspect_postgres(dsn)
    if warehouse.dialect == Dialect.DUCKDB:
        return introspect_duckdb(dsn)
    if warehouse.dialect == Dialect.MYSQL:
        snapshot = introspect_mysql(dsn)
        return {**snapshot, "tables": within_grant(snapshot["tables"])}
    return introspect_sqlite(dsn)


def warehouse_role_check(warehouse: Warehouse) -> dict:
    """Check the warehouse's login now (PostgreSQL's role, MySQL's grants); SQLite has none to check."""
    if warehouse.dialect not in ROLE_CHECKED:
        return not_applicable()
    return login_role_check(warehouse.dialect, warehouse_dsn(warehouse)).as_dict()


def catalogue_refresh(*, warehouse: Warehouse, progress=None) -> Catalogue:
    """Introspect the warehouse and check its login role; store both on a catalogue version.

    An unchanged schema keeps its version (with the new role check). A login role that can
    do more than read is stored as such — the warehouse then runs nothing from a model and
    its page says why — and raises UnsafeWarehouseRole naming each finding, unless
    `WAREHOUSE_ALLOW_UNSAFE_ROLE` is set. `progress(step)`, if given, is told each step as it starts
    (the browser's "Refresh catalogue", `probes/catalogue_jobs.py`).
    """
    if not warehouse.has_connection:
        raise WarehouseUnavailable(
            f"catalogue from file, no connection: warehouse {warehouse.name!r} is refreshed by import_catalogue"
        )
    progress = progress or (lambda step: None)
    progress(REFRESH_STEPS[0])
    snapshot = introspect(warehouse)
    progress(REFRESH_STEPS[1])
    snapshot = snapshot_add_samples(warehouse=warehouse, snapshot=snapshot)  # for the judges' schema slice
    progress(REFRESH_STEPS[2])
    role_check = warehouse_role_check(warehouse)
    progress(REFRESH_STEPS[3])
    catalogue = _store_catalogue(warehouse, snapshot, role_check)
    if role_check.get("applicable") and not role_check.get("safe") and not settings.WAREHOUSE_ALLOW_UNSAFE_ROLE:
        raise UnsafeWarehouseRole(RoleCheck(**{k: role_check[k] for k in ("login_role", "findings", "checked_at")}))
    return catalogue


def catalogue_store(warehouse: Warehouse, snapshot: dict, role_check: dict) -> Catalogue:
    """Store a snapshot as the warehouse's next catalogue version (an unchanged one keeps its version)."""
    return _store_catalogue(warehouse, snapshot, role_check)


@transaction.atomic
def _store_catalogue(warehouse: Warehouse, snapshot: dict, role_check: dict) -> Catalogue:
    Warehouse.objects.select_for_update().filter(pk=warehouse.pk).first()
    latest = Catalogue.objects.filter(warehouse=warehouse).order_by("-version").first()
    if latest is not None and latest.snapshot == snapshot:
        latest.role_check = role_check
        latest.save(update_fields=["role_check"])
        return latest
    version = (latest.version if latest else 0) + 1
    catalogue = Catalogue(warehouse=warehouse, version=version, snapshot=snapshot, role_check=role_check)
    catalogue.full_clean()
    catalogue.save()
    return catalogue
