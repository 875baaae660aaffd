"""One calibration load per run selection, reused by the dashboard's page and its partials.

The dashboard's htmx partials (an ensemble, a heatmap cell, a confusion cell, the missed
items) and its downloads each need the same `CalibrationData` the page loaded. Loading it
again per request would make every click cost a full read of the verdicts; instead the
loaded arrays are kept in Django's cache under the selection (gold-set version, runs, item
source, split) with a fingerprint of those runs' verdicts beside them (`newest_verdict`: per
run, its recorded sums, or its newest verdict when it has none). A request reads the runs
and that fingerprint (two small queries) and reuses the arrays when nothing was written
since; otherwise it loads again and replaces the entry, so a running calibration keeps one
entry per selection, never one per verdict.

The arrays are stored with what the report reads beside them (the taxonomy, the class
guesses, the run labels), so a page built from a reused load reads no verdict at all. A
selection of more than `CACHE_MAX_ROWS` verdict rows is loaded per request and not kept:
the cache holds small and mid-sized selections, never the whole history of a large team.
"""

from __future__ import annotations

import hashlib

from django.core.cache import caches
from django.db.models import BigIntegerField, Case, DateTimeField, OuterRef, Q, Subquery, When

from judges.calibration_data import CalibrationData, load_calibration
from judges.class_guesses import class_data_ensure
from judges.models import CalibrationRun, RunVerdictSums, Verdict
from judges.report import run_labels_get
from judges.run_selection import RunSelection, calibration_run_ids_get
from labelling.models import GoldSetVersion
from labelling.split_models import SPLIT_ALL

# Bump when CalibrationData's fields change, so a deploy never reads another layout's pickles.
CACHE_LAYOUT = 1
# Verdict rows past which a load is not kept (about 40 bytes a row in the cache).
CACHE_MAX_ROWS = 500_000
CACHE_SECONDS = 15 * 60


def selection_cache_key(gold_set_version_id: int, run_ids: list[int], source: str, split: str) -> str:
    """Return the cache key of one run selection's load (the runs hashed, so any number fits a key)."""
    runs = ",".join(str(run) for run in sorted(run_ids))
    digest = hashlib.sha256(f"{gold_set_version_id}|{runs}|{source}|{split}".encode()).hexdigest()
    return f"docket:calibration:{CACHE_LAYOUT}:{digest}"


def newest_verdict(run_ids: list[int]) -> tuple | None:
    """Return what changes when the runs' verdicts change (None when they have none), in one query.

    Per run: its recorded sums' newest id (`judges.verdict_sums`: database triggers delete
    them on any insert, update or delete of the run's verdicts, so they stand for "unchanged
    since recorded"), else its newest verdict's id and time (the time too: an id can come
    back after a rolled-back insert, SQLite reuses it). A run's newest verdict is looked up
    only when it has no sums: on PostgreSQL that lookup walks the primary key back from the
    table's newest verdict, so for an old run it read every verdict written since (0.34 s on
    a version with 1.5M newer verdicts; issue 33).
    """
    if not run_ids:
        return None
    recorded = Subquery(RunVerdictSums.objects.filter(run=OuterRef("pk")).order_by("-pk").values("pk")[:1])
    newest = Verdict.objects.filter(run=OuterRef("pk")).order_by("-pk")

    def unless_recorded(field: str, output_field):
        # CASE evaluates the subquery only for a run without sums.
        return Case(When(Q(recorded__isnull=True), then=Subquery(newest.values(field)[:1])), output_field=output_field)

    rows = (
        CalibrationRun.objects.filter(pk__in=run_ids)
        .annotate(recorded=recorded)
        .annotate(
            newest=unless_recorded("pk", BigIntegerField()), newest_at=unless_recorded("created_at", DateTimeField())
        )
        .order_by("pk")
        .values_list("pk", "recorded", "newest", "newest_at")
    )
    found = tuple(rows)
    if all(recorded is None and newest is None for _, recorded, newest, _ in found):
        return None
    return found


def calibration_cached(
    *, gold_set_version: GoldSetVersion, selection: RunSelection | None = None, split: str = SPLIT_ALL
) -> CalibrationData:
    """Return the selection's `CalibrationData`, loaded once and reused while no verdict is added to its runs.

    Raises ValueError as `load_calibration` does (a named run not on the version).
    """
    selection = selection or RunSelection()
    run_ids = calibration_run_ids_get(gold_set_version=gold_set_version, selection=selection)
    key = selection_cache_key(gold_set_version.pk, run_ids, selection.source, split)
    newest = newest_verdict(run_ids)
    cache = caches["calibration"]
    kept = cache.get(key) if newest is not None else None
    if kept is not None and kept["newest"] == newest:
        # Each read is its own copy (the cache pickles): naming this request's selection changes no one else's.
        data = kept["data"]
        data.gold_set_version, data.selection = gold_set_version, selection
        return data
    data = load_calibration(gold_set_version=gold_set_version, selection=selection, split=split)
    # What the report reads beside the arrays, read now so that a reused load reads nothing.
    class_data_ensure(data)
    if data.run_labels is None:
        data.run_labels = run_labels_get(data.run_ids)
    if newest is not None and len(data.rows[0]) <= CACHE_MAX_ROWS:
        cache.set(key, {"newest": newest, "data": data}, CACHE_SECONDS)
    return data
