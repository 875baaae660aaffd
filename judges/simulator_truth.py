"""What the vendor simulator is told is true: Docket's gold labels, by SQL fingerprint.

The simulator (`simulator/`, outside the apps) reads no database and imports nothing of
Docket, so the truth is handed to it: `gold_label_oracle` is a callable a test hands to an
in-process simulator; `simulator_truth_write` writes the file `python -m simulator --truth`
reads (`manage.py export_simulator_truth`, and `seed_demo` for `make run`). Both answer in
plain data, `{"wrong": bool, "error_class": "a;b"}`. Without a truth, unmarked SQL counts
as correct and a simulated judge has nothing to miss.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections

from config.private_files import write_private_file
from labelling.models import GoldSetVersionItem, LabelDecision, Query
from probes.fingerprint import sql_fingerprint


def _label(item: dict) -> dict:
    return {"wrong": item["decision"] == LabelDecision.WRONG, "error_class": item["error_class"] or ""}


def gold_label_oracle():
    """Return oracle(sql) -> label | None reading the latest published gold label of the SQL's fingerprint."""
    cache: dict = {}
    lock = threading.Lock()

    def oracle(sql: str):
        with lock:
            if sql in cache:
                return cache[sql]
        # The prompt does not say the dialect for sure: match the fingerprint under either.
        fingerprints = {sql_fingerprint(sql, "sqlite"), sql_fingerprint(sql, "postgres")}
        try:
            item = (
                GoldSetVersionItem.objects.filter(query__fingerprint__in=fingerprints)
                .order_by("-version__published_at")
                .values("decision", "error_class")
                .first()
            )
        finally:
            close_old_connections()
        label = None if item is None else _label(item)
        with lock:
            cache[sql] = label
        return label

    return oracle


def simulator_truth_rows() -> list[dict]:
    """One row per SQL text that shares a fingerprint with a gold item: {"sql", "wrong", "error_class"}.

    The simulator matches a text with its white space folded and its case ignored, not by
    fingerprint, so every text Docket holds for a labelled fingerprint is written out.
    """
    latest: dict[str, dict] = {}
    items = (
        GoldSetVersionItem.objects.exclude(query__fingerprint="")
        .order_by("version__published_at", "pk")
        .values("query__fingerprint", "decision", "error_class")
    )
    for item in items.iterator():
        latest[item["query__fingerprint"]] = _label(item)  # the latest published label wins
    texts = Query.objects.filter(fingerprint__in=latest).values_list("fingerprint", "sql").distinct()
    rows = {sql: {"sql": sql, **latest[fingerprint]} for fingerprint, sql in texts.iterator()}
    return sorted(rows.values(), key=lambda row: row["sql"])


def simulator_truth_path() -> Path:
    """Where `seed_demo` writes the truth file and `make run`'s simulator reads it."""
    return Path(settings.VAR_DIR) / "simulator-truth.jsonl"


def simulator_truth_write(path) -> int:
    """Write the simulator's truth file (JSON lines, mode 0600: it holds the gold labels); return its rows."""
    rows = simulator_truth_rows()
    write_private_file(path, "".join(json.dumps(row) + "\n" for row in rows))
    return len(rows)
