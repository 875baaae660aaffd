"""A catalogue snapshot indexed for case-insensitive lookups (the verifier's and fan-out detector's view)."""

import difflib
from dataclasses import dataclass

from sqlglot import exp

from probes.models import Catalogue


@dataclass
class TableInfo:
    name: str
    columns: dict[str, str]  # lower-case name → name as stored
    keys: list[frozenset[str]]  # primary key and unique constraints, lower-case
    row_estimate: int | None
    primary_key: list[str]


class CatalogueIndex:
    def __init__(self, snapshot: dict):
        self.dialect = snapshot.get("dialect", "sqlite")
        # The schema a bare table name means (a catalogue from a file names it; `public`, `main`).
        self.default_schemas = {"public", "main", (snapshot.get("default_schema") or "").lower()} - {""}
        self.tables: dict[str, TableInfo] = {}
        for name, entry in (snapshot.get("tables") or {}).items():
            keys = []
            if entry.get("primary_key"):
                keys.append(frozenset(c.lower() for c in entry["primary_key"]))
            keys.extend(frozenset(c.lower() for c in unique) for unique in entry.get("unique") or [])
            self.tables[name.lower()] = TableInfo(
                name=name,
                columns={c["name"].lower(): c["name"] for c in entry.get("columns") or []},
                keys=keys,
                row_estimate=entry.get("row_estimate"),
                primary_key=list(entry.get("primary_key") or []),
            )

    def table(self, node: exp.Table) -> TableInfo | None:
        name = node.name.lower()
        schema = (node.db or "").lower()
        if schema and schema not in self.default_schemas:
            return self.tables.get(f"{schema}.{name}")
        return self.tables.get(name)

    def table_names(self) -> list[str]:
        return [info.name for info in self.tables.values()]


def catalogue_index(catalogue: Catalogue | dict) -> CatalogueIndex:
    """Index a catalogue once per loaded instance (kept on the instance, never shared by pk)."""
    if isinstance(catalogue, dict):
        return CatalogueIndex(catalogue)
    index = getattr(catalogue, "_docket_index", None)
    if index is None:
        index = CatalogueIndex(catalogue.snapshot)
        catalogue._docket_index = index
    return index


def did_you_mean(name: str, candidates: list[str]) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[match[0]] if match else None
