"""The schema a judge reads: a catalogue rendered as text, whole or sliced to what the SQL touches.

Seed 003's judge receives "the relevant slice of the schema". Rendering is deterministic
(same catalogue snapshot -> byte-identical text), so every query on one warehouse shares
the whole-catalogue text and a vendor can cache it as a prompt prefix. When the whole
catalogue does not fit the budget, the slice is the tables the SQL references plus the
tables one foreign-key hop away; one-hop tables are dropped first, then columns the SQL
does not name, and the slice says what was dropped.

Sample values of low-cardinality text columns (`orders.status`: completed, pending, ...)
are read at catalogue refresh (`probes.catalogue_samples.snapshot_add_samples`) and kept
in the snapshot under "samples", so they are versioned with the catalogue.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from probes.models import Catalogue, Dialect

log = logging.getLogger(__name__)

DEFAULT_TOKEN_BUDGET = 4000
SQLGLOT_DIALECTS = {Dialect.SQLITE: "sqlite", Dialect.POSTGRES: "postgres", "postgresql": "postgres"}


def estimate_tokens(text: str) -> int:
    """Estimate tokens as a vendor would bill them (about four characters per token)."""
    return max(1, len(text) // 4) if text else 0


@dataclass
class SchemaSlice:
    """The schema text for one query, and what it was built from."""

    text: str
    mode: str  # "full" (whole catalogue, shared by every query) | "referenced" | "none"
    catalogue_version: int | None = None
    warehouse: str = ""
    tables: list[str] = field(default_factory=list)
    dropped_tables: list[str] = field(default_factory=list)
    dropped_columns: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def shared(self) -> bool:
        """Whether every query on the warehouse gets this same text (so it can be cached)."""
        return self.mode == "full"

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def as_context(self) -> dict:
        """What a verdict records about the schema it was judged against."""
        data = {"mode": self.mode, "catalogue_version": self.catalogue_version, "tokens": self.tokens}
        if self.warehouse:
            data["warehouse"] = self.warehouse
        if self.mode == "referenced":
            data["tables"] = self.tables
        if self.dropped_tables:
            data["dropped_tables"] = self.dropped_tables
        if self.dropped_columns:
            data["dropped_columns"] = self.dropped_columns
        if self.reason:
            data["reason"] = self.reason
        return data


def no_slice(reason: str) -> SchemaSlice:
    return SchemaSlice(text="", mode="none", reason=reason)


# --- rendering --------------------------------------------------------------------------------


def _column_line(table: dict, column: dict, samples: dict, comments: dict) -> str:
    name = column["name"]
    parts = [f"  {name} {column.get('type') or '?'}", "NULL" if column.get("nullable") else "NOT NULL"]
    if table.get("primary_key") == [name]:
        parts.append("PK")
    if [name] in (table.get("unique") or []):
        parts.append("UNIQUE")
    for fk in table.get("foreign_keys") or []:
        if fk["columns"] == [name]:
            parts.append(f"-> {fk['ref_table']}.{fk['ref_columns'][0]}")
    line = " ".join(parts)
    notes = []
    if comments.get(name):
        notes.append(comments[name])
    if samples.get(name):
        notes.append("values: " + ", ".join(str(v) for v in samples[name]))
    if notes:
        line += "  -- " + "; ".join(notes)
    return line


def render_table(name: str, table: dict, *, samples: dict, comments: dict, columns: list[str] | None = None) -> str:
    """Render one table; `columns` keeps only those (catalogue order)."""
    rows = table.get("row_estimate")
    head = f"{'VIEW' if table.get('kind') == 'view' else 'TABLE'} {name}"
    if rows is not None:
        head += f" (~{rows} rows)"
    if comments.get(""):
        head += f"  -- {comments['']}"
    lines = [head]
    kept = [c for c in table.get("columns") or [] if columns is None or c["name"] in columns]
    lines += [_column_line(table, column, samples, comments) for column in kept]
    pk = table.get("primary_key") or []
    if len(pk) > 1:
        lines.append(f"  PRIMARY KEY ({', '.join(pk)})")
    for unique in table.get("unique") or []:
        if len(unique) > 1:
            lines.append(f"  UNIQUE ({', '.join(unique)})")
    for fk in table.get("foreign_keys") or []:
        if len(fk["columns"]) > 1:
            lines.append(
                f"  FOREIGN KEY ({', '.join(fk['columns'])}) -> {fk['ref_table']} ({', '.join(fk['ref_columns'])})"
            )
    if columns is not None and len(kept) < len(table.get("columns") or []):
        lines.append(f"  ... {len(table['columns']) - len(kept)} more columns not shown")
    return "\n".join(lines)


def _header(snapshot: dict, warehouse_name: str, version: int | None) -> str:
    return f"Warehouse {warehouse_name} ({snapshot.get('dialect', '?')}), catalogue version {version}."


def render_catalogue(snapshot: dict, *, warehouse_name: str = "", version: int | None = None) -> str:
    """Render every table of a snapshot, sorted by name: same snapshot, same text."""
    samples = snapshot.get("samples") or {}
    comments = snapshot.get("comments") or {}
    tables = snapshot.get("tables") or {}
    blocks = [_header(snapshot, warehouse_name, version)]
    for name in sorted(tables):
        blocks.append(
            render_table(name, tables[name], samples=samples.get(name) or {}, comments=comments.get(name) or {})
        )
    return "\n\n".join(blocks)


# --- which tables and columns the SQL touches -------------------------------------------------------


def referenced_objects(sql: str, dialect: str, known_tables) -> tuple[list[str], set[str]]:
    """Return (tables the SQL reads that the catalogue knows, column names it mentions)."""
    read = SQLGLOT_DIALECTS.get(dialect, dialect or None)
    try:
        trees = [tree for tree in sqlglot.parse(sql, read=read) if tree is not None]
    except sqlglot.errors.ParseError:
        trees = []
    known = {name.lower(): name for name in known_tables}
    tables, columns = [], set()
    for tree in trees:
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            qualified = f"{table.db}.{table.name}".lower() if table.db else table.name.lower()
            for candidate in (qualified, table.name.lower()):
                if candidate in known and candidate not in ctes and known[candidate] not in tables:
                    tables.append(known[candidate])
                    break
        columns.update(column.name.lower() for column in tree.find_all(exp.Column))
        for join in tree.find_all(exp.Join):
            columns.update(key.name.lower() for key in join.args.get("using") or [])
    if not trees:
        # Unparseable SQL: fall back to names that appear as words in the text.
        lowered = sql.lower()
        tables = [known[name] for name in sorted(known) if _word_in(name, lowered)]
    return sorted(tables), columns


def _word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(word)}(?!\w)", text) is not None


def one_hop_tables(tables: dict, referenced: list[str]) -> list[str]:
    """Tables one foreign-key hop from the referenced ones, either direction, sorted."""
    wanted = set(referenced)
    hop = set()
    for name, table in tables.items():
        for fk in table.get("foreign_keys") or []:
            if name in wanted and fk["ref_table"] in tables:
                hop.add(fk["ref_table"])
            if fk["ref_table"] in wanted:
                hop.add(name)
    return sorted(hop - wanted)


def key_columns(table: dict) -> set[str]:
    keys = set(table.get("primary_key") or [])
    for fk in table.get("foreign_keys") or []:
        keys.update(fk["columns"])
    return keys


def render_referenced(
    snapshot: dict, *, sql: str, dialect: str, token_budget: int, warehouse_name: str = "", version=None
) -> SchemaSlice:
    """Render the referenced tables plus one FK hop, trimmed to the budget, naming what was dropped."""
    tables = snapshot.get("tables") or {}
    samples = snapshot.get("samples") or {}
    comments = snapshot.get("comments") or {}
    referenced, mentioned = referenced_objects(sql, dialect, tables)
    hop = one_hop_tables(tables, referenced)
    kept_columns: dict[str, list[str] | None] = {name: None for name in referenced}
    dropped_tables: list[str] = []
    dropped_columns: list[str] = []

    def text_for(hop_tables):
        blocks = [_header(snapshot, warehouse_name, version)]
        for name in sorted([*referenced, *hop_tables]):
            blocks.append(
                render_table(
                    name,
                    tables[name],
                    samples=samples.get(name) or {},
                    comments=comments.get(name) or {},
                    columns=kept_columns.get(name),
                )
            )
        notes = []
        if dropped_tables:
            notes.append("tables one foreign-key hop away, not shown: " + ", ".join(dropped_tables))
        if dropped_columns:
            notes.append("columns the SQL does not name, not shown: " + ", ".join(dropped_columns))
        if notes:
            blocks.append("Dropped to fit the schema budget: " + "; ".join(notes) + ".")
        return "\n\n".join(blocks)

    # Drop one-hop tables first, the last in name order first (deterministic).
    hop_kept = list(hop)
    text = text_for(hop_kept)
    while estimate_tokens(text) > token_budget and hop_kept:
        dropped_tables.insert(0, hop_kept.pop())
        text = text_for(hop_kept)
    # Then columns the SQL does not name (keys stay: they say how tables join).
    for name in sorted(referenced, reverse=True):
        if estimate_tokens(text) <= token_budget:
            break
        table = tables[name]
        keys = key_columns(table)
        keep = [c["name"] for c in table.get("columns") or [] if c["name"].lower() in mentioned or c["name"] in keys]
        dropped_columns.extend(
            sorted(f"{name}.{c['name']}" for c in table.get("columns") or [] if c["name"] not in keep)
        )
        kept_columns[name] = keep
        dropped_columns.sort()
        text = text_for(hop_kept)
    return SchemaSlice(
        text=text,
        mode="referenced",
        catalogue_version=version,
        warehouse=warehouse_name,
        tables=sorted([*referenced, *hop_kept]),
        dropped_tables=dropped_tables,
        dropped_columns=dropped_columns,
    )


# Rendered whole catalogues. A snapshot never changes, but its id can be given again once the
# rows are gone (`reset_demo`, or SQLite reusing a rolled-back id): the creation time is part of
# the key, so a reused id never reads another catalogue's text.
_rendered: dict[tuple, str] = {}


def catalogue_text(catalogue: Catalogue) -> str:
    key = (catalogue.pk, catalogue.version, catalogue.created_at, catalogue.warehouse.name)
    text = _rendered.get(key)
    if text is None:
        if len(_rendered) > 256:
            _rendered.clear()
        text = _rendered[key] = render_catalogue(
            catalogue.snapshot, warehouse_name=catalogue.warehouse.name, version=catalogue.version
        )
    return text


def schema_slice(*, catalogue: Catalogue | None, sql: str, dialect: str, token_budget: int) -> SchemaSlice:
    """Return the schema a judge sees for one SQL text on the catalogue's warehouse."""
    if catalogue is None:
        return no_slice("the warehouse has no catalogue yet (run refresh_catalogue)")
    whole = catalogue_text(catalogue)
    if estimate_tokens(whole) <= token_budget:
        return SchemaSlice(
            text=whole,
            mode="full",
            catalogue_version=catalogue.version,
            warehouse=catalogue.warehouse.name,
            tables=sorted(catalogue.snapshot.get("tables") or {}),
        )
    return render_referenced(
        catalogue.snapshot,
        sql=sql,
        dialect=dialect or catalogue.snapshot.get("dialect", ""),
        token_budget=token_budget,
        warehouse_name=catalogue.warehouse.name,
        version=catalogue.version,
    )
