"""A catalogue from a file, for a warehouse Docket cannot reach (issue 34).

`import_catalogue WAREHOUSE FILE --dialect snowflake|bigquery|...` reads either `CREATE TABLE`
(and `CREATE VIEW`) DDL, parsed by sqlglot in that dialect, or a CSV export of
`information_schema.columns` (columns `table_schema`, `table_name`, `column_name`,
`data_type`, `is_nullable`, optionally `ordinal_position` and `comment`), plus an optional
key file: a CSV with `table_schema`, `table_name`, `constraint_type` (PRIMARY KEY, UNIQUE,
FOREIGN KEY), `constraint_name`, `column_name`, `referenced_table_schema`,
`referenced_table_name`, `referenced_column_name` (the shape of
`information_schema.key_column_usage` joined to `table_constraints`).

The snapshot has the shape of an introspected one (`probes.catalogue`), plus `"source":
"file"` and the schema a bare table name means (`default_schema`: the schema most tables are
in; tables of other schemas are named `schema.table`). The warehouse is registered with no
connection (`Warehouse.has_connection`): the judges get the schema slice and the verifier's
static rules run, and everything that needs the database is a fault, `no_connection`.
"""

import csv
import io
from collections import Counter
from pathlib import Path

import sqlglot
from django.db import transaction
from sqlglot import exp
from sqlglot.errors import SqlglotError

from probes.allowlist import sqlglot_dialect
from probes.catalogue import catalogue_store
from probes.models import Catalogue, Dialect, Warehouse
from probes.role_check import not_applicable

FILE_SOURCE = "file"


class CatalogueFileInvalid(ValueError):
    """The file cannot be read as DDL or as an information_schema export; the message says where."""


def _new_table(kind: str = "table") -> dict:
    return {"kind": kind, "columns": [], "primary_key": [], "unique": [], "foreign_keys": [], "row_estimate": None}


def _key(schema: str, table: str) -> tuple[str, str]:
    return (schema or "", table)


# --- DDL ---------------------------------------------------------------------------------------


def _table_ref(table: exp.Table) -> tuple[str, str]:
    return _key(table.db, table.name)


def _reference(reference: exp.Reference, schema: str) -> tuple[tuple[str, str], list[str]]:
    target = reference.this
    table = target.this if isinstance(target, exp.Schema) else target
    columns = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else []
    ref_schema, ref_name = _table_ref(table)
    return _key(ref_schema or schema, ref_name), columns


def _comment_text(node) -> str:
    return " ".join(str(node.this.this if isinstance(node.this, exp.Literal) else node.this).split())[:200]


def _ddl_table(create: exp.Create, tables: dict, comments: dict, dialect: str) -> None:
    schema_node = create.this
    if create.kind == "VIEW":
        table = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
        key = _table_ref(table)
        entry = tables.setdefault(key, _new_table("view"))
        select = create.expression
        names = (
            [c.name for c in schema_node.expressions]
            if isinstance(schema_node, exp.Schema)
            else (select.named_selects if isinstance(select, exp.Query) else [])
        )
        entry["columns"] = [{"name": name, "type": "", "nullable": True} for name in names if name and name != "*"]
        return
    if not isinstance(schema_node, exp.Schema):
        return  # CREATE TABLE ... AS SELECT / LIKE: no column list to read
    key = _table_ref(schema_node.this)
    entry = tables.setdefault(key, _new_table())
    notes = comments.setdefault(key, {})
    for prop in (create.args.get("properties") or exp.Properties()).expressions:
        if isinstance(prop, exp.SchemaCommentProperty):
            notes[""] = _comment_text(prop)
    for item in schema_node.expressions:
        if isinstance(item, exp.ColumnDef):
            _ddl_column(item, key, entry, notes, dialect)
        elif isinstance(item, exp.PrimaryKey):
            entry["primary_key"] = [c.name for c in item.expressions]
        elif isinstance(item, exp.UniqueColumnConstraint) and isinstance(item.this, exp.Schema):
            entry["unique"].append([c.name for c in item.this.expressions])
        elif isinstance(item, exp.Constraint | exp.ForeignKey):
            for fk in [item] if isinstance(item, exp.ForeignKey) else item.find_all(exp.ForeignKey):
                ref, ref_columns = _reference(fk.args["reference"], key[0])
                entry["foreign_keys"].append(
                    {"columns": [c.name for c in fk.expressions], "ref_table": ref, "ref_columns": ref_columns}
                )
            for pk in item.find_all(exp.PrimaryKey) if isinstance(item, exp.Constraint) else []:
                entry["primary_key"] = [c.name for c in pk.expressions]


def _ddl_column(item: exp.ColumnDef, key: tuple[str, str], entry: dict, notes: dict, dialect: str) -> None:
    name = item.name
    kind = item.args.get("kind")
    column = {
        "name": name,
        "type": kind.sql(dialect=sqlglot_dialect(dialect)).lower() if kind is not None else "",
        "nullable": True,
    }
    for constraint in item.constraints:
        inner = constraint.kind
        if isinstance(inner, exp.NotNullColumnConstraint) and not inner.args.get("allow_null"):
            column["nullable"] = False
        elif isinstance(inner, exp.PrimaryKeyColumnConstraint):
            column["nullable"] = False
            entry["primary_key"] = [name]
        elif isinstance(inner, exp.UniqueColumnConstraint):
            entry["unique"].append([name])
        elif isinstance(inner, exp.Reference):
            ref, ref_columns = _reference(inner, key[0])
            entry["foreign_keys"].append({"columns": [name], "ref_table": ref, "ref_columns": ref_columns or [name]})
        elif isinstance(inner, exp.CommentColumnConstraint):
            notes[name] = _comment_text(inner)
    entry["columns"].append(column)


def ddl_tables(text: str, dialect: str) -> tuple[dict, dict]:
    """Read CREATE TABLE / CREATE VIEW statements: ({(schema, table): entry}, {(schema, table): comments})."""
    try:
        statements = sqlglot.parse(text, read=sqlglot_dialect(dialect))
    except SqlglotError as error:
        raise CatalogueFileInvalid(f"not {dialect} DDL sqlglot can read: {str(error).splitlines()[0]}") from error
    tables: dict = {}
    comments: dict = {}
    for statement in statements:
        if isinstance(statement, exp.Create) and statement.kind in ("TABLE", "VIEW"):
            _ddl_table(statement, tables, comments, dialect)
    if not tables:
        raise CatalogueFileInvalid("the file holds no CREATE TABLE or CREATE VIEW statement")
    return tables, comments


# --- information_schema CSV --------------------------------------------------------------------


def _csv_rows(text: str, required: tuple[str, ...], what: str) -> list[dict]:
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    fields = {(name or "").strip().lower() for name in reader.fieldnames or []}
    missing = [name for name in required if name not in fields]
    if missing:
        raise CatalogueFileInvalid(
            f"the {what} has no column {', '.join(missing)} (its header: {', '.join(sorted(fields))})"
        )
    return [{(k or "").strip().lower(): (v or "").strip() for k, v in row.items()} for row in reader]


def columns_csv_tables(text: str) -> tuple[dict, dict]:
    """Read an information_schema.columns export (one row a column)."""
    rows = _csv_rows(text, ("table_name", "column_name"), "columns file")
    tables: dict = {}
    comments: dict = {}
    positions: dict = {}
    for index, row in enumerate(rows):
        key = _key(row.get("table_schema", ""), row["table_name"])
        entry = tables.setdefault(key, _new_table())
        nullable = row.get("is_nullable", "YES").upper() not in ("NO", "N", "FALSE", "0")
        column = {"name": row["column_name"], "type": row.get("data_type", "").lower(), "nullable": nullable}
        entry["columns"].append(column)
        position = row.get("ordinal_position", "")
        positions[id(column)] = int(position) if position.isdigit() else index
        comment = row.get("comment") or row.get("description") or ""
        if comment:
            comments.setdefault(key, {})[row["column_name"]] = " ".join(comment.split())[:200]
    for entry in tables.values():
        entry["columns"].sort(key=lambda column: positions[id(column)])
    if not tables:
        raise CatalogueFileInvalid("the columns file has a header but no rows")
    return tables, comments


def keys_csv_apply(text: str, tables: dict) -> None:
    """Add primary keys, unique keys and foreign keys from a key file to the tables read."""
    rows = _csv_rows(text, ("table_name", "constraint_type", "column_name"), "key file")
    grouped: dict = {}
    for row in rows:
        key = _key(row.get("table_schema", ""), row["table_name"])
        name = row.get("constraint_name") or f"{row['constraint_type']}:{key}"
        grouped.setdefault((key, name, row["constraint_type"].upper()), []).append(row)
    for (key, _, kind), members in grouped.items():
        entry = tables.get(key)
        if entry is None:
            raise CatalogueFileInvalid(
                f"the key file names table {'.'.join(p for p in key if p)}, which the columns file does not"
            )
        members.sort(key=lambda r: int(r["ordinal_position"]) if r.get("ordinal_position", "").isdigit() else 0)
        columns = [r["column_name"] for r in members]
        if kind == "PRIMARY KEY":
            entry["primary_key"] = columns
        elif kind == "UNIQUE":
            entry["unique"].append(columns)
        elif kind == "FOREIGN KEY":
            first = members[0]
            ref = _key(first.get("referenced_table_schema") or key[0], first.get("referenced_table_name", ""))
            entry["foreign_keys"].append(
                {
                    "columns": columns,
                    "ref_table": ref,
                    "ref_columns": [r.get("referenced_column_name", "") for r in members],
                }
            )


# --- the snapshot ------------------------------------------------------------------------------


def snapshot_from_tables(tables: dict, comments: dict, *, dialect: str, file_name: str) -> dict:
    """Name the tables (bare in the default schema, else `schema.table`) and build the snapshot."""
    schemas = Counter(schema for schema, _ in tables)
    default_schema = schemas.most_common(1)[0][0] if schemas else ""

    def name_of(key: tuple[str, str]) -> str:
        schema, table = key
        return table if not schema or schema.lower() == default_schema.lower() else f"{schema}.{table}"

    named = {}
    for key, entry in tables.items():
        for fk in entry["foreign_keys"]:
            fk["ref_table"] = name_of(fk["ref_table"])
        named[name_of(key)] = entry
    snapshot = {
        "dialect": dialect,
        "source": FILE_SOURCE,
        "file": file_name,
        "default_schema": default_schema,
        "tables": dict(sorted(named.items())),
    }
    notes = {name_of(key): value for key, value in comments.items() if value}
    if notes:
        snapshot["comments"] = dict(sorted(notes.items()))
    return snapshot


def read_catalogue_file(path: Path, *, dialect: str, keys_path: Path | None = None) -> dict:
    """Read a DDL file or an information_schema.columns CSV (by its extension) into a snapshot."""
    text = _read_text(path)
    if path.suffix.lower() == ".csv":
        tables, comments = columns_csv_tables(text)
    else:
        tables, comments = ddl_tables(text, dialect)
    if keys_path is not None:
        keys_csv_apply(_read_text(keys_path), tables)
    return snapshot_from_tables(tables, comments, dialect=dialect, file_name=path.name)


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise CatalogueFileInvalid(f"{path} cannot be read ({exc.strerror or type(exc).__name__})") from exc
    except UnicodeDecodeError as exc:
        raise CatalogueFileInvalid(f"{path} is not UTF-8 text (byte {exc.start})") from exc


@transaction.atomic
def catalogue_import(
    *, name: str, path: Path, dialect: str, keys_path: Path | None = None, description: str = ""
) -> Catalogue:
    """Store the file's catalogue as a new version of a warehouse with no connection.

    The warehouse is registered by name if absent. A warehouse Docket connects to is refused:
    its catalogue comes from `refresh_catalogue`, never from a file that may disagree with it.
    """
    if dialect not in Dialect.values:
        raise CatalogueFileInvalid(f"dialect must be one of {', '.join(Dialect.values)}; got {dialect!r}")
    snapshot = read_catalogue_file(path, dialect=dialect, keys_path=keys_path)
    warehouse = Warehouse.objects.select_for_update().filter(name=name).first()
    if warehouse is None:
        warehouse = Warehouse(name=name, dialect=dialect, has_connection=False, description=description)
        warehouse.full_clean()
        warehouse.save()
    elif warehouse.has_connection:
        raise CatalogueFileInvalid(
            f"warehouse {name!r} has a connection ({warehouse.dialect}): refresh_catalogue introspects it"
        )
    elif warehouse.dialect != dialect or description:
        warehouse.dialect = dialect
        warehouse.description = description or warehouse.description
        warehouse.save(update_fields=["dialect", "description"])
    return catalogue_store(warehouse, snapshot, not_applicable() | {"source": FILE_SOURCE})
