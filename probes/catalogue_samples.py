"""Sample values and comments read at catalogue refresh, kept in the snapshot for the judges' schema.

Sample values of low-cardinality text columns (`orders.status`: completed, pending, ...)
are read through the read-only path (`probes.execution.run_readonly`); table and column
comments (PostgreSQL) through a read-only connection. Both land in the snapshot, so they
are versioned with the catalogue and rendered by `probes.schema_slice`.
"""

import logging

from django.conf import settings

from probes.execution import run_readonly
from probes.models import Dialect, Warehouse
from probes.schema_slice import key_columns
from probes.warehouses import open_postgres, warehouse_dsn

log = logging.getLogger(__name__)

# Values shown per low-cardinality column; a column with more distinct values is not sampled.
SAMPLE_VALUES = 6
# At most this many columns are sampled per refresh (each costs one GROUP BY on the warehouse).
SAMPLE_COLUMNS_MAX = 60
TEXT_TYPES = ("char", "text", "string", "clob", "enum")


def _quote(name: str, mark: str = '"') -> str:
    return mark + name.replace(mark, mark * 2) + mark


def _table_ref(name: str, mark: str = '"') -> str:
    return ".".join(_quote(part, mark) for part in name.split(".", 1)) if "." in name else _quote(name, mark)


def column_samples(*, warehouse: Warehouse, table: str, column: str) -> list | None:
    """Return the column's distinct values when there are at most SAMPLE_VALUES, else None."""
    mark = "`" if warehouse.dialect == Dialect.MYSQL else '"'  # in MySQL "x" is a string
    quoted = _quote(column, mark)
    sql = (
        f"SELECT {quoted} FROM {_table_ref(table, mark)} WHERE {quoted} IS NOT NULL "
        f"GROUP BY {quoted} ORDER BY {quoted} LIMIT {SAMPLE_VALUES + 1}"
    )
    result = run_readonly(warehouse=warehouse, sql=sql, row_cap=SAMPLE_VALUES + 1)
    if not result.executed or len(result.rows) > SAMPLE_VALUES or not result.rows:
        return None
    values = [row[0] for row in result.rows]
    if any(not isinstance(value, str) or len(value) > 40 for value in values):
        return None
    return values


def catalogue_samples(*, warehouse: Warehouse, snapshot: dict) -> dict:
    """Sample low-cardinality text columns of the snapshot's tables: {table: {column: [values]}}."""
    samples: dict = {}
    budget = SAMPLE_COLUMNS_MAX
    for name in sorted(snapshot.get("tables") or {}):
        table = snapshot["tables"][name]
        if table.get("kind") != "table":
            continue
        keys = key_columns(table) | {c for u in table.get("unique") or [] for c in u}
        for column in table.get("columns") or []:
            data_type = (column.get("type") or "").lower()
            if column["name"] in keys or not any(t in data_type for t in TEXT_TYPES):
                continue
            if budget <= 0:
                return samples
            budget -= 1
            values = column_samples(warehouse=warehouse, table=name, column=column["name"])
            if values:
                samples.setdefault(name, {})[column["name"]] = values
    return samples


PG_COMMENTS = """
SELECT n.nspname, c.relname, COALESCE(a.attname, ''), d.description
FROM pg_description d
JOIN pg_class c ON c.oid = d.objoid AND d.classoid = 'pg_class'::regclass
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.objsubid AND d.objsubid > 0
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY 1, 2, 3
"""


def catalogue_comments(*, warehouse: Warehouse) -> dict:
    """Read table and column comments (PostgreSQL): {table: {"": table comment, column: comment}}."""
    if warehouse.dialect != Dialect.POSTGRES:
        return {}
    conn = open_postgres(warehouse_dsn(warehouse), timeout_s=settings.WAREHOUSE_STATEMENT_TIMEOUT_S)
    try:
        comments: dict = {}
        with conn.cursor() as cursor:
            for schema, table, column, text in cursor.execute(PG_COMMENTS).fetchall():
                name = table if schema == "public" else f"{schema}.{table}"
                comments.setdefault(name, {})[column] = " ".join((text or "").split())[:200]
        return comments
    finally:
        conn.rollback()
        conn.close()


def _columns_of(snapshot: dict, table: str) -> set[str]:
    return {column["name"] for column in snapshot["tables"][table].get("columns") or []}


def snapshot_add_samples(*, warehouse: Warehouse, snapshot: dict) -> dict:
    """Return the snapshot with sample values and comments (the catalogue_refresh hook).

    A failure to sample is not a failure to introspect: the snapshot is kept without them.
    """
    try:
        samples = catalogue_samples(warehouse=warehouse, snapshot=snapshot)
        comments = catalogue_comments(warehouse=warehouse)
    except Exception:  # noqa: BLE001 - samples are an extra; the catalogue itself must still refresh
        log.exception("sampling the catalogue of %s failed", warehouse)
        return snapshot
    comments = {
        table: {
            column: text for column, text in notes.items() if column == "" or column in _columns_of(snapshot, table)
        }
        for table, notes in comments.items()
        if table in (snapshot.get("tables") or {})
    }  # only what the grant lets the role read: a comment names its table and column
    comments = {table: notes for table, notes in comments.items() if notes}
    extra = {}
    if samples:
        extra["samples"] = samples
    if comments:
        extra["comments"] = comments
    return {**snapshot, **extra}
