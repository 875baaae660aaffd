"""Benchmark: the calibration report against merely fetching its verdicts, as verdicts grow.

A gold set per size, each with one completed run of 5 judges × N items × 3 repeats. In
the same process we time (a) the floor: the report's own verdict SELECT — exactly the
columns it fetches, packed the same way (`tests/bench/bulk_fill.py` `verdicts_fetch_floor`)
— into numpy arrays, and (b) `judges.report.build_report`, alternately, three rounds each.

- PostgreSQL (database `bench_report`, when a server answers): the curve of issue 33 at
  100,000, 1,000,000 and 5,000,000 verdicts, (b) / (a) ≤ 1.3 at each, and the report's own
  process peaking under 500 MB at 5,000,000 (400 MB at 1,000,000).
- SQLite (a temp file): 1,000,000 verdicts, (b) / (a) ≤ 1.5 and a peak under 400 MB.

BENCH_REPORT_VERDICTS (comma-separated) changes the sizes on both. Fill and absolute times
are informational lines: no target, never counted. Each database is fresh, migrated,
filled by COPY / executemany (`bulk_fill.py`) and dropped afterwards; phases run in child
processes, so one Django settings module serves each database and the report's peak
memory is measured in a process that did nothing else.

    python -m tests.bench.bench_report          # prints the results as JSON lines
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

from django.core.management import call_command
from django.db import transaction

from judges.calibration_data import selected_run_ids
from judges.models import JudgeVersion
from judges.report import build_report
from labelling.models import GoldSetVersion
from tests.bench.bulk_fill import (
    ScratchDatabase,
    analyze,
    completed_run_add,
    gold_version_create,
    judge_versions_create,
    phased_main,
    postgres_reachable,
    size_label,
    verdicts_fetch_floor,
)
from tests.bench.calibration_processes import own_peak_rss_mb

MODULE = "bench_report"
JUDGES, REPEATS = 5, 3  # the run shape of issue 33 (5 judges × items × 3 repeats)
SIZES = {"postgresql": "100000,1000000,5000000", "sqlite": "1000000"}
TARGETS = {"postgresql": 1.3, "sqlite": 1.5}
TIMING_ROUNDS = 3
# At least this many verdicts are timed per measurement: a 0.3 s report at 100k moves by a
# tenth between two rounds on a shared machine, so small sizes take more rounds (11 at 100k).
TIMED_VERDICTS = 1_000_000


def rounds_for(verdicts: int) -> int:
    """Return how many rounds of fetch and report to time: TIMING_ROUNDS, more for small sizes (odd)."""
    return max(TIMING_ROUNDS, TIMED_VERDICTS // max(verdicts, 1) | 1)


def sizes_for(vendor: str) -> list[int]:
    return [int(size) for size in os.environ.get("BENCH_REPORT_VERDICTS", SIZES[vendor]).split(",")]


def gold_set_name(verdicts: int) -> str:
    return f"bench-report-{verdicts}"


# --- child-process phases -----------------------------------------------------------------


def phase_fill(verdicts: str) -> dict:
    """Migrate (the first time) and bulk-insert a gold set and one completed run of this many verdicts."""
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    items = max(int(verdicts) // (JUDGES * REPEATS), 10)
    with transaction.atomic():
        judges = list(JudgeVersion.objects.filter(judge__name__startswith="bench-judge-").order_by("pk"))
        judges = judges or judge_versions_create("bench-judge", JUDGES)
        version, query_ids, is_wrong = gold_version_create(gold_set_name(int(verdicts)), items)
        completed_run_add(version, judges, query_ids, is_wrong, repeats=REPEATS, seed=int(verdicts), label="bench")
    analyze()
    return {"fill_seconds": time.perf_counter() - started}


def gold_set_version(verdicts: str):
    return GoldSetVersion.objects.select_related("gold_set").get(gold_set__name=gold_set_name(int(verdicts)))


def phase_time(verdicts: str) -> dict:
    """Time fetch and report alternately, `rounds_for` the size each; return the medians."""
    version = gold_set_version(verdicts)
    run_ids = selected_run_ids(version)
    items = max(int(verdicts) // (JUDGES * REPEATS), 10)
    expected = JUDGES * items * REPEATS
    # One untimed report warms both sides: the database's cache of the verdicts, and the report's
    # first-call costs (lazy imports, the process's first large allocations), which a server
    # answering its hundredth report no longer pays. Unwarmed, the first round read 1.33 where
    # the next two read 1.03 at five million verdicts.
    build_report(gold_set_version=version, generation_cost_usd=0.0125, baseline="bench-judge-00")
    fetch_times, report_times = [], []
    for _ in range(rounds_for(int(verdicts))):
        started = time.perf_counter()
        fetched = verdicts_fetch_floor(run_ids, expected)[0]
        fetch_times.append(time.perf_counter() - started)
        assert len(fetched) == expected, len(fetched)
        del fetched
        started = time.perf_counter()
        report = build_report(gold_set_version=version, generation_cost_usd=0.0125, baseline="bench-judge-00")
        report_times.append(time.perf_counter() - started)
    assert len(report["judges"]) == JUDGES and len(report["pairs"]) == JUDGES * (JUDGES - 1) // 2
    return {"fetch_seconds": statistics.median(fetch_times), "report_seconds": statistics.median(report_times)}


def phase_memory(verdicts: str) -> dict:
    """Build the report once in a fresh process; return its peak resident memory."""
    version = gold_set_version(verdicts)
    before = own_peak_rss_mb()
    build_report(gold_set_version=version, generation_cost_usd=0.0125)
    peak = own_peak_rss_mb()
    return {"peak_rss_mb": peak, "rss_before_report_mb": before}


PHASES = {"fill": phase_fill, "time": phase_time, "memory": phase_memory}


# --- parent: one database at a time --------------------------------------------------------


def measure(database: ScratchDatabase) -> list[dict]:
    backend, results = database.vendor, []
    for verdicts in sizes_for(backend):
        filled = database.run_phase(MODULE, "fill", verdicts)
        timed = database.run_phase(MODULE, "time", verdicts)
        memory = database.run_phase(MODULE, "memory", verdicts)
        ratio = timed["report_seconds"] / timed["fetch_seconds"]
        print(
            f"{backend} {verdicts}: filled in {filled['fill_seconds']:.0f}s; fetch {timed['fetch_seconds']:.2f}s, "
            f"report {timed['report_seconds']:.2f}s (medians of {rounds_for(verdicts)}); "
            f"peak {memory['peak_rss_mb']:.0f} MB",
            file=sys.stderr,
        )
        prefix = f"report_{size_label(verdicts)}_verdicts_{backend}"
        memory_target = 500 if verdicts > 1_000_000 else 400
        results += [
            {"name": f"{prefix}_vs_floor_ratio", "value": round(ratio, 3), "unit": "x", "target_op": "<=",
             "target": TARGETS[backend]},
            {"name": f"{prefix}_peak_rss", "value": round(memory["peak_rss_mb"], 1), "unit": "MB", "target_op": "<",
             "target": memory_target},
            # Informational: no target, not counted by run_all.
            {"name": f"{prefix}_floor_fetch_seconds", "value": round(timed["fetch_seconds"], 3), "unit": "s"},
            {"name": f"{prefix}_seconds", "value": round(timed["report_seconds"], 3), "unit": "s"},
            {"name": f"{prefix}_fill_seconds", "value": round(filled["fill_seconds"], 1), "unit": "s"},
        ]  # fmt: skip
    return results


def run() -> list[dict]:
    """Measure on SQLite, then the curve on PostgreSQL if reachable; return the benchmark records."""
    with ScratchDatabase("bench_report", vendor="sqlite") as database:
        results = measure(database)
    if postgres_reachable():
        with ScratchDatabase("bench_report", vendor="postgresql") as database:
            results += measure(database)
    return results


if __name__ == "__main__":
    phased_main(run, PHASES)
