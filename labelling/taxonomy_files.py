"""Reading a taxonomy file: a JSON list of classes, or a CSV with the header `class,category,description`.

Each entry is `{"class", "category", "description"}` (category and description optional). An
entry may instead say that a name Docket's checkers emit maps onto one of the file's classes:
`{"class": "unknown_object", "maps_to": "Schema Linking: Table"}` (in CSV, a `maps_to` column).
A bad file raises TaxonomyFileError naming the entry and what is wrong; nothing is stored.
"""

import csv
import json
from dataclasses import dataclass

from labelling.error_classes import UNCLASSIFIED, class_name_problem
from labelling.goldset_records import open_text

CSV_HEADER = ["class", "category", "description"]
KNOWN_KEYS = {"class", "category", "description", "maps_to"}


class TaxonomyFileError(Exception):
    """A taxonomy file that cannot be read as classes: nothing of it is stored."""


@dataclass(frozen=True)
class TaxonomyEntry:
    name: str
    category: str = ""
    description: str = ""
    maps_to: str = ""  # set: not a class, another name of the class it names


def taxonomy_entries_read(path_or_file) -> list[TaxonomyEntry]:
    """Read a taxonomy file (JSON list or CSV, told apart by its first character) into entries."""
    with open_text(path_or_file) as stream:
        try:
            text = stream.read()
        except UnicodeDecodeError:
            raise TaxonomyFileError("the taxonomy file is not UTF-8 text") from None
    records = _json_records(text) if text.lstrip().startswith("[") else _csv_records(text)
    return taxonomy_entries_validate(records)


def _json_records(text: str) -> list[tuple[str, dict]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaxonomyFileError(f"the taxonomy file is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    records = []
    for number, entry in enumerate(data, start=1):
        where = f"entry {number}"
        if not isinstance(entry, dict):
            raise TaxonomyFileError(f"{where}: expected an object with 'class', 'category' and 'description'")
        unknown = sorted(set(entry) - KNOWN_KEYS)
        if unknown:
            raise TaxonomyFileError(
                f"{where}: unknown field {', '.join(map(repr, unknown))} (known: class, category, description, maps_to)"
            )
        records.append((where, entry))
    return records


def _csv_records(text: str) -> list[tuple[str, dict]]:
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise TaxonomyFileError("the taxonomy file is empty")
    header = [name.strip() for name in rows[0]]
    if header[:3] != CSV_HEADER or not set(header[3:]) <= {"maps_to"}:
        raise TaxonomyFileError(
            f"a taxonomy CSV needs the header {','.join(CSV_HEADER)} (optionally ,maps_to), not {','.join(header)}"
        )
    records = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise TaxonomyFileError(f"line {line}: expected {len(header)} fields, found {len(row)}")
        records.append((f"line {line}", dict(zip(header, row, strict=True))))
    return records


def taxonomy_entries_validate(records: list[tuple[str, dict]]) -> list[TaxonomyEntry]:
    """Check every entry: text fields, storable class names, no class twice (mappings are checked on import)."""
    entries, seen = [], {}
    for where, record in records:
        values = {}
        for key in KNOWN_KEYS:
            value = record.get(key)
            if value is not None and not isinstance(value, str):
                raise TaxonomyFileError(f"{where}: '{key}' must be text")
            values[key] = (value or "").strip()
        name = values["class"]
        problem = class_name_problem(name) if name else "missing 'class'"
        if problem:
            raise TaxonomyFileError(f"{where}: {problem}")
        if name == UNCLASSIFIED:
            raise TaxonomyFileError(f"{where}: '{UNCLASSIFIED}' is Docket's word for a wrong label without a class")
        if name in seen:
            raise TaxonomyFileError(f"{where}: class '{name}' is already listed ({seen[name]})")
        seen[name] = where
        entries.append(TaxonomyEntry(name, values["category"], values["description"], values["maps_to"]))
    if not entries:
        raise TaxonomyFileError("the taxonomy file lists no classes")
    return entries
