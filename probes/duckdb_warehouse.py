"""DuckDB warehouses (issue 34): the catalogue of a file, and the demo built as DuckDB.

`introspect_duckdb` reads the file through Docket's own read-only connection (the model's
path refuses the `duckdb_*` functions and information_schema): tables and views of the
`main` schema, columns, primary and unique keys, foreign keys and row counts.
`build_duckdb_demo` writes the demo tables of `probes.demo_warehouse` into a new file.
"""

import csv
import tempfile
from pathlib import Path

import duckdb

from probes.demo_warehouse import INDEXES, SCHEMA, TABLES, demo_warehouse_rows
from probes.duckdb_runner import duckdb_path, open_duckdb

COLUMNS = """
SELECT table_name, column_name, data_type, is_nullable = 'YES' FROM information_schema.columns
WHERE table_schema = 'main' ORDER BY table_name, ordinal_position
"""
CONSTRAINTS = """
SELECT table_name, constraint_type, constraint_column_names, referenced_table, referenced_column_names
FROM duckdb_constraints() WHERE schema_name = 'main' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')
ORDER BY table_name, constraint_index
"""


def introspect_duckdb(dsn: str) -> dict:
    conn = open_duckdb(dsn)
    try:
        tables: dict[str, dict] = {}
        kinds = conn.execute(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1"
        ).fetchall()
        for name, kind in kinds:
            tables[name] = {
                "kind": "view" if kind == "VIEW" else "table",
                "columns": [],
                "primary_key": [],
                "unique": [],
                "foreign_keys": [],
                "row_estimate": None,
            }
        for table, column, data_type, nullable in conn.execute(COLUMNS).fetchall():
            if table in tables:
                tables[table]["columns"].append({"name": column, "type": data_type.lower(), "nullable": bool(nullable)})
        for table, kind, columns, ref_table, ref_columns in conn.execute(CONSTRAINTS).fetchall():
            entry = tables.get(table)
            if entry is None:
                continue
            if kind == "PRIMARY KEY":
                entry["primary_key"] = list(columns)
            elif kind == "UNIQUE" and list(columns) not in entry["unique"]:
                entry["unique"].append(list(columns))
            elif kind == "FOREIGN KEY":
                entry["foreign_keys"].append(
                    {"columns": list(columns), "ref_table": ref_table, "ref_columns": list(ref_columns)}
                )
        for name, entry in tables.items():
            if entry["kind"] == "table":
                quoted = '"' + name.replace('"', '""') + '"'
                entry["row_estimate"] = int(conn.execute(f"SELECT COUNT(*) FROM {quoted}").fetchone()[0])
        return {"dialect": "duckdb", "tables": dict(sorted(tables.items()))}
    finally:
        conn.close()


def build_duckdb_demo(path: str) -> dict[str, int]:
    """Write the demo tables into a new DuckDB file at `path` (an old one is replaced)."""
    target = Path(duckdb_path(path) if str(path).startswith("duckdb:") else path)
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in (target, target.with_name(target.name + ".wal")):
        stale.unlink(missing_ok=True)
    rows = demo_warehouse_rows()
    conn = duckdb.connect(str(target))
    try:
        with tempfile.TemporaryDirectory() as folder:
            for table in TABLES:
                conn.execute(SCHEMA[table])
                # One COPY per table: DuckDB's executemany takes minutes for the demo's rows.
                source = Path(folder) / f"{table}.csv"
                with source.open("w", newline="") as out:
                    csv.writer(out).writerows(_csv_row(row) for row in rows[table])
                conn.execute(f"COPY {table} FROM '{source}' (HEADER false, NULL '\\N')")
        for statement in INDEXES:
            conn.execute(statement)
        conn.execute("CHECKPOINT")
    finally:
        conn.close()
    return {table: len(table_rows) for table, table_rows in rows.items()}


def _csv_row(row) -> list:
    return ["\\N" if value is None else (int(value) if isinstance(value, bool) else value) for value in row]
