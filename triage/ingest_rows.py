"""The ingestion API's row rules in plain Python: the check every posted row goes through first.

`QueryInSerializer` (`triage/api.py`) states the API's fields and limits and writes every error
message. Running it costs more CPU than storing the row (a serializer and eight bound fields
per row, a Python loop over every character for surrogates), so `row_clean` checks a row
against the same limits without DRF and returns exactly what the serializer would return. A
row it cannot decide (a value the serializer would trim, convert or refuse) gives None and
goes to the serializer, which explains. `triage/tests/test_ingest_rows.py` holds the two
equal on generated rows. The API's fast path, its DRF view and OTLP ingestion all call it.
"""

import re

from rest_framework.exceptions import ValidationError

from triage.attempts import AttemptListField

# Deeper JSON is refused: no real query's metadata nests this far, and every reader of a
# deeply nested value (the decoder, validation, storage) recurses once per level.
MAX_JSON_DEPTH = 64
TEXT_LIMITS = {"external_id": 200, "question": 20_000, "sql": 200_000}
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")
DIALECTS = frozenset({"sqlite", "postgres"})
KNOWN_FIELDS = frozenset({*TEXT_LIMITS, "warehouse", "dialect", "metadata", "attempts"})
# What neither PostgreSQL's text nor its JSON can hold: NUL, and UTF-16 surrogates standing alone.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
ATTEMPTS = AttemptListField()


def json_depth(value) -> int:
    """Return how deeply lists and objects nest in a decoded JSON value (a scalar is 0), without recursing."""
    deepest, stack = 0, [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def is_unstorable(text: str) -> bool:
    return UNSTORABLE.search(text) is not None


def unstorable_text_at(value, path: str) -> str | None:
    """Return the path of the first key or string in a JSON value that cannot be stored, if any."""
    if isinstance(value, str):
        return path if is_unstorable(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if is_unstorable(str(key)):
                return f"a key of {path}"
            found = unstorable_text_at(item, f"{path}.{key}")
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = unstorable_text_at(item, f"{path}[{index}]")
            if found:
                return found
    return None


def _plain_text(value, limit: int) -> bool:
    """Say whether the serializer would keep this text as it is (a trimmed, non-empty, storable str)."""
    return type(value) is str and 0 < len(value) <= limit and value == value.strip() and not is_unstorable(value)


def row_clean(payload) -> dict | None:
    """Return the row as `QueryInSerializer` would validate it, or None when only the serializer may judge it.

    Warehouses are not looked up here: the caller checks the names against the stored ones.
    """
    if type(payload) is not dict or not payload.keys() <= KNOWN_FIELDS:
        return None
    row = {}
    for name, limit in TEXT_LIMITS.items():
        value = payload.get(name)
        if not _plain_text(value, limit):
            return None
        row[name] = value
    warehouse = payload.get("warehouse")
    if type(warehouse) is not str or not SLUG.fullmatch(warehouse):
        return None
    row["warehouse"] = warehouse
    metadata = payload.get("metadata", {})
    if type(metadata) is not dict or (metadata and not _plain_metadata(metadata)):
        return None
    row["metadata"] = metadata
    if "dialect" in payload:
        dialect = payload["dialect"]
        if type(dialect) is not str or dialect not in DIALECTS:
            return None
        row["dialect"] = dialect
    if "attempts" in payload:
        try:
            row["attempts"] = ATTEMPTS.run_validation(payload["attempts"])
        except ValidationError:
            return None
    return row


def _plain_metadata(metadata: dict) -> bool:
    """Say whether metadata nests at most MAX_JSON_DEPTH deep and holds only storable keys and texts (one pass)."""
    stack = [(metadata, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return False
        if type(value) is dict:
            if any(UNSTORABLE.search(key if type(key) is str else str(key)) for key in value):
                return False
            items = value.values()
        else:
            items = value
        for item in items:
            kind = type(item)
            if kind is str:
                if UNSTORABLE.search(item):
                    return False
            elif kind is dict or kind is list:
                stack.append((item, depth + 1))
    return True
