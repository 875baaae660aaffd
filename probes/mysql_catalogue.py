"""Introspect a MySQL / MariaDB warehouse into a catalogue snapshot (issue 34).

The schema read is the DSN's database; `information_schema` shows only what the login's
grants reach (tables, and within a column grant only its columns), so the catalogue is what
the grant allows, as on PostgreSQL. Tables and views, columns (`COLUMN_TYPE`, nullability),
primary and unique keys (`STATISTICS`), foreign keys (`KEY_COLUMN_USAGE`), row estimates
(`TABLE_ROWS`, counted for a table the server has no estimate of) and comments.
"""

from django.conf import settings

from probes.mysql_runner import open_mysql

TABLES = """
SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME
"""
COLUMNS = """
SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = 'YES', COLUMN_COMMENT FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION
"""
KEYS = """
SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND NON_UNIQUE = 0 AND SUB_PART IS NULL
ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX
"""
FOREIGN_KEYS = """
SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL
ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION
"""


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def introspect_mysql(dsn: str) -> dict:
    conn = open_mysql(dsn, timeout_s=settings.WAREHOUSE_STATEMENT_TIMEOUT_S * 4)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT DATABASE()")
            database = cursor.fetchone()[0]
            tables: dict[str, dict] = {}
            comments: dict[str, dict] = {}
            cursor.execute(TABLES)
            for name, kind, rows, comment in cursor.fetchall():
                is_view = kind == "VIEW"
                tables[name] = {
                    "kind": "view" if is_view else "table",
                    "columns": [],
                    "primary_key": [],
                    "unique": [],
                    "foreign_keys": [],
                    "row_estimate": None if is_view or rows is None else int(rows),
                }
                if comment and not is_view:
                    comments.setdefault(name, {})[""] = " ".join(comment.split())[:200]
            cursor.execute(COLUMNS)
            for table, column, data_type, nullable, comment in cursor.fetchall():
                entry = tables.get(table)
                if entry is None:
                    continue
                entry["columns"].append({"name": column, "type": data_type.lower(), "nullable": bool(nullable)})
                if comment:
                    comments.setdefault(table, {})[column] = " ".join(comment.split())[:200]
            keys: dict[tuple[str, str], list[str]] = {}
            cursor.execute(KEYS)
            for table, index, column in cursor.fetchall():
                keys.setdefault((table, index), []).append(column)
            for (table, index), columns in keys.items():
                if table in tables:
                    target = tables[table]
                    if index == "PRIMARY":
                        target["primary_key"] = columns
                    elif columns not in target["unique"]:
                        target["unique"].append(columns)
            foreign: dict[tuple[str, str], dict] = {}
            cursor.execute(FOREIGN_KEYS)
            for table, constraint, column, ref_schema, ref_table, ref_column in cursor.fetchall():
                ref = ref_table if ref_schema == database else f"{ref_schema}.{ref_table}"
                entry = foreign.setdefault((table, constraint), {"columns": [], "ref_table": ref, "ref_columns": []})
                entry["columns"].append(column)
                entry["ref_columns"].append(ref_column)
            for (table, _), fk in foreign.items():
                if table in tables:
                    tables[table]["foreign_keys"].append(fk)
            # InnoDB's estimate of a small or new table may be 0: count it, under the statement timeout.
            for name, entry in tables.items():
                if entry["kind"] == "table" and not entry["row_estimate"]:
                    cursor.execute(f"SELECT COUNT(*) FROM {_quoted(name)}")
                    entry["row_estimate"] = int(cursor.fetchone()[0])
        snapshot = {"dialect": "mysql", "tables": dict(sorted(tables.items()))}  # within_grant: probes.catalogue
        kept = {t: c for t, c in comments.items() if t in snapshot["tables"]}
        if kept:
            snapshot["comments"] = kept
        return snapshot
    finally:
        conn.close()
