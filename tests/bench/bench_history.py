"""Benchmark: the dashboard's cost as runs accumulate on a gold-set version (issue 33).

Runs of 5 judges × 2,000 items × 3 repeats (30,000 verdicts each): three gold-set versions
of 2,000 items carry 1, 10 and 50 completed runs. The dashboard page showing only a
version's latest run (`?runs=<id>`) is timed through Django's test client (middleware,
view, template) on the three in turn, round after round, so each sees the same load;
history must not cost: the page at 50 runs against the page at 1, target ≤ 1.2×; nor age:
the 1-run version, filled first, against the 50-run one, filled last, target ≤ 1.2×. With 50
runs, the dashboard over every run (1,500,000 verdicts) is timed against the fetch floor
of the same verdicts (`tests/bench/bulk_fill.py` `verdicts_fetch_floor`, the report's own
SELECT into numpy), target ≤ 1.3×. Absolute times are informational lines.

On PostgreSQL (database `bench_history`) when a server answers, else on a SQLite file;
the line names which. Filled by COPY (`bulk_fill.py`), timed in child processes.

    python -m tests.bench.bench_history
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import reverse

from judges.calibration_data import selected_run_ids
from judges.models import CalibrationRun, JudgeVersion
from labelling.models import GoldSetVersion
from tests.bench.bulk_fill import (
    ScratchDatabase,
    analyze,
    completed_run_add,
    gold_version_create,
    judge_versions_create,
    phased_main,
    verdicts_fetch_floor,
)

MODULE = "bench_history"
JUDGES, REPEATS = 5, 3
ITEMS = int(os.environ.get("BENCH_HISTORY_ITEMS", "2000"))  # fewer for a quick check of the bench itself
HISTORY = (1, 10, 50)
ADMIN = "bench-history-admin"
LATEST_ROUNDS, ALL_ROUNDS = 7, 5


def gold_set_name(runs: int) -> str:
    return f"bench-history-{runs}"


# --- child-process phases -----------------------------------------------------------------


def phase_fill(runs: str) -> dict:
    """Add a gold-set version of ITEMS items with `runs` completed runs (judges and admin the first time)."""
    started = time.perf_counter()
    call_command("migrate", verbosity=0)  # the first time: an empty database
    with transaction.atomic():
        judges = list(JudgeVersion.objects.filter(judge__name__startswith="bench-history-judge").order_by("pk"))
        if not judges:
            judges = judge_versions_create("bench-history-judge", JUDGES)
            get_user_model().objects.create_superuser(ADMIN, password="bench")
        version, query_ids, is_wrong = gold_version_create(gold_set_name(int(runs)), ITEMS)
    for number in range(int(runs)):
        with transaction.atomic():
            completed_run_add(version, judges, query_ids, is_wrong, repeats=REPEATS, seed=number)
    analyze()
    return {"fill_seconds": time.perf_counter() - started}


def admin_client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=ADMIN))
    return client


def timed_get(client: Client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}")
    return elapsed


def dashboard_url(runs: int, *, latest_only: bool) -> str:
    version = GoldSetVersion.objects.get(gold_set__name=gold_set_name(runs))
    url = reverse("judges:dashboard", kwargs={"version_id": version.pk})
    if not latest_only:
        return url
    return url + f"?runs={CalibrationRun.objects.filter(gold_set_version=version).order_by('-pk').first().pk}"


def phase_latest() -> dict:
    """Time the dashboard showing only the latest run of each version, in turn; return the medians.

    Taking the versions in turn, round after round, puts the same machine load on each.
    """
    client = admin_client()
    urls = {runs: dashboard_url(runs, latest_only=True) for runs in HISTORY}
    for url in urls.values():
        timed_get(client, url)  # warm the connection, the template cache and the database's cache
    times = {runs: [] for runs in HISTORY}
    for _ in range(LATEST_ROUNDS):
        for runs, url in urls.items():
            times[runs].append(timed_get(client, url))
    return {str(runs): statistics.median(found) for runs, found in times.items()}


def phase_all() -> dict:
    """Time the fetch floor and the dashboard over every run of the largest history, alternately."""
    client = admin_client()
    version = GoldSetVersion.objects.get(gold_set__name=gold_set_name(HISTORY[-1]))
    run_ids = selected_run_ids(version)
    url = dashboard_url(HISTORY[-1], latest_only=False)
    expected = JUDGES * ITEMS * REPEATS * HISTORY[-1]  # the count the page has from its cost sums
    rows = verdicts_fetch_floor(run_ids, expected)[0]  # warm the database's cache for both
    assert len(rows) == expected, len(rows)
    timed_get(client, url)
    floor, page = [], []
    for _ in range(ALL_ROUNDS):
        started = time.perf_counter()
        verdicts_fetch_floor(run_ids, expected)
        floor.append(time.perf_counter() - started)
        page.append(timed_get(client, url))
    return {"floor_seconds": statistics.median(floor), "page_seconds": statistics.median(page)}


PHASES = {"fill": phase_fill, "latest": phase_latest, "all": phase_all}


# --- parent -------------------------------------------------------------------------------


def run() -> list[dict]:
    """Fill versions with 1, 10 and 50 runs; time their latest-run pages in turn, then the all-runs page."""
    with ScratchDatabase("bench_history") as database:
        backend = database.vendor
        for runs in HISTORY:
            filled = database.run_phase(MODULE, "fill", runs)
            print(f"{backend}: a version with {runs} runs filled in {filled['fill_seconds']:.0f}s", file=sys.stderr)
        latest = {int(runs): seconds for runs, seconds in database.run_phase(MODULE, "latest").items()}
        every = database.run_phase(MODULE, "all")
    print(f"{backend}: latest-run pages {latest}; all runs {every}", file=sys.stderr)
    prefix = f"dashboard_{backend}"
    results = [
        {
            "name": f"{prefix}_latest_run_page_{HISTORY[-1]}_runs_vs_1_run",
            "value": round(latest[HISTORY[-1]] / latest[1], 3),
            "unit": "x",
            "target_op": "<=",
            "target": 1.2,
        },
        {
            # The 1-run version was filled first: 1.83M verdicts were written after its run. Its
            # page must not cost more for being old (the cache's fingerprint walked the verdict
            # table back from its newest row to the run's: 0.45 s against 0.11 s).
            "name": f"{prefix}_latest_run_page_oldest_1_run_vs_newest_{HISTORY[-1]}_runs",
            "value": round(latest[1] / latest[HISTORY[-1]], 3),
            "unit": "x",
            "target_op": "<=",
            "target": 1.2,
        },
        {
            "name": f"{prefix}_latest_run_page_{HISTORY[1]}_runs_vs_1_run",
            "value": round(latest[HISTORY[1]] / latest[1], 3),
            "unit": "x",
        },
        {
            "name": f"{prefix}_all_{HISTORY[-1]}_runs_page_vs_fetch_floor",
            "value": round(every["page_seconds"] / every["floor_seconds"], 3),
            "unit": "x",
            "target_op": "<=",
            "target": 1.3,
        },
    ]
    results += [
        {"name": f"{prefix}_latest_run_page_{runs}_runs_seconds", "value": round(latest[runs], 3), "unit": "s"}
        for runs in HISTORY
    ]
    results += [
        {"name": f"{prefix}_all_runs_page_seconds", "value": round(every["page_seconds"], 3), "unit": "s"},
        {"name": f"{prefix}_all_runs_floor_seconds", "value": round(every["floor_seconds"], 3), "unit": "s"},
    ]
    return results


if __name__ == "__main__":
    phased_main(run, PHASES)
