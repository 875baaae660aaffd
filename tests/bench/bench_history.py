"""Benchmark: the dashboard's cost as runs accumulate on a gold-set version (issue 33).

Runs of 5 judges × 2,000 items × 3 repeats (30,000 verdicts each) pile up on one version:
1, then 10, then 50 completed runs. At each size the dashboard page showing only the latest
run (`?runs=<id>`) is timed through Django's test client (middleware, view, template);
history must not cost: the page at 50 runs against the page at 1, target ≤ 1.2×. With 50
runs, the dashboard over every run (1,500,000 verdicts) is timed against the fetch floor
of the same verdicts (`tests/bench/bulk_fill.py` `verdicts_fetch_floor`, the report's own
SELECT into numpy), target ≤ 1.3×. Absolute times are informational lines.

On PostgreSQL (database `bench_history`) when a server answers, else on a SQLite file;
the line names which. Filled by COPY (`bulk_fill.py`), timed in child processes.

    python -m tests.bench.bench_history
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import numpy as np

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import reverse

from judges.calibration_data import selected_run_ids
from judges.models import CalibrationRun, JudgeVersion
from labelling.models import GoldSetVersion, GoldSetVersionItem
from tests.bench.bulk_fill import (
    ScratchDatabase,
    analyze,
    completed_run_add,
    gold_version_create,
    judge_versions_create,
    verdicts_fetch_floor,
)

MODULE = "bench_history"
JUDGES, REPEATS = 5, 3
ITEMS = int(os.environ.get("BENCH_HISTORY_ITEMS", "2000"))  # fewer for a quick check of the bench itself
HISTORY = (1, 10, 50)
GOLD_SET = "bench-history"
ADMIN = "bench-history-admin"
LATEST_ROUNDS, ALL_ROUNDS = 7, 3


# --- child-process phases -----------------------------------------------------------------


def phase_fill(runs: str) -> dict:
    """Bring the version to `runs` completed runs (creating the version and judges the first time)."""
    wanted = int(runs)
    started = time.perf_counter()
    call_command("migrate", verbosity=0)  # the first time: an empty database
    version = GoldSetVersion.objects.filter(gold_set__name=GOLD_SET).first()
    if version is None:
        with transaction.atomic():
            version, _, _ = gold_version_create(GOLD_SET, ITEMS)
            judge_versions_create("bench-history-judge", JUDGES)
            get_user_model().objects.create_superuser(ADMIN, password="bench")
    items = GoldSetVersionItem.objects.filter(version=version).order_by("query_id")
    query_ids = list(items.values_list("query_id", flat=True))
    is_wrong = [decision == "wrong" for decision in items.values_list("decision", flat=True)]
    judges = list(JudgeVersion.objects.filter(judge__name__startswith="bench-history-judge").order_by("pk"))
    have = CalibrationRun.objects.filter(gold_set_version=version).count()
    for number in range(have, wanted):
        with transaction.atomic():
            completed_run_add(version, judges, query_ids, np.array(is_wrong), repeats=REPEATS, seed=number)
    analyze()
    return {"fill_seconds": time.perf_counter() - started}


def dashboard_client() -> tuple[Client, GoldSetVersion]:
    client = Client()
    client.force_login(get_user_model().objects.get(username=ADMIN))
    return client, GoldSetVersion.objects.get(gold_set__name=GOLD_SET)


def timed_get(client: Client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}")
    return elapsed


def phase_latest() -> dict:
    """Time the dashboard showing only the latest run; return the median."""
    client, version = dashboard_client()
    latest = CalibrationRun.objects.filter(gold_set_version=version).order_by("-pk").first()
    url = reverse("judges:dashboard", kwargs={"version_id": version.pk}) + f"?runs={latest.pk}"
    timed_get(client, url)  # warm the connection, the template cache and the database's cache
    return {"seconds": statistics.median(timed_get(client, url) for _ in range(LATEST_ROUNDS))}


def phase_all() -> dict:
    """Time the fetch floor and the dashboard over every run, alternately; return the medians."""
    client, version = dashboard_client()
    run_ids = selected_run_ids(version)
    url = reverse("judges:dashboard", kwargs={"version_id": version.pk})
    rows = verdicts_fetch_floor(run_ids)[0]  # warm the database's cache for both
    assert len(rows) == JUDGES * ITEMS * REPEATS * HISTORY[-1], len(rows)
    timed_get(client, url)
    floor, page = [], []
    for _ in range(ALL_ROUNDS):
        started = time.perf_counter()
        verdicts_fetch_floor(run_ids)
        floor.append(time.perf_counter() - started)
        page.append(timed_get(client, url))
    return {"floor_seconds": statistics.median(floor), "page_seconds": statistics.median(page)}


PHASES = {"fill": phase_fill, "latest": phase_latest, "all": phase_all}


# --- parent -------------------------------------------------------------------------------


def run() -> list[dict]:
    """Fill 1, 10, 50 runs, timing the latest-run page at each; then the all-runs page against its floor."""
    with ScratchDatabase("bench_history") as database:
        backend = database.vendor
        latest = {}
        for runs in HISTORY:
            filled = database.run_phase(MODULE, "fill", runs)
            latest[runs] = database.run_phase(MODULE, "latest")["seconds"]
            print(f"{backend}: {runs} runs (filled in {filled['fill_seconds']:.0f}s): latest-run page "
                  f"{latest[runs]:.3f}s", file=sys.stderr)  # fmt: skip
        every = database.run_phase(MODULE, "all")
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
    if len(sys.argv) >= 3 and sys.argv[1] == "--phase":
        print(json.dumps(PHASES[sys.argv[2]](*sys.argv[3:])))
    else:
        for record in run():
            print(json.dumps(record))
