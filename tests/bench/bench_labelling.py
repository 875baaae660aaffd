"""Benchmarks of the labelling app (`make bench`): import speed and memory, queue latency.

- import of a 50,000-item JSONL file: seconds (target: well under a minute);
- peak memory (max RSS of the importing process) at 10,000 and 50,000 items: the import
  streams, so the peak stays under 300 MB and does not grow with the file;
- `queue_item_get_next` latency with 100,000 queries and 200,000 labels (target < 50 ms).

Runs on its own scratch database (SQLite file under var/, or `<test name>_bench_labelling`
on PostgreSQL), created and destroyed here. Run alone: `python -m tests.bench.bench_labelling`.
"""

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

import django
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from labelling.goldset_io import goldset_import
from labelling.models import GoldSet, Label, Query
from labelling.queue_selectors import queue_item_get_next
from tests.bench.calibration_processes import own_peak_rss_mb

ROOT = Path(__file__).resolve().parents[2]
# BENCH_LABELLING_SCALE=0.1 gives a quick smoke run of the same code.
SCALE = float(os.environ.get("BENCH_LABELLING_SCALE", "1"))
IMPORT_ITEMS = int(50_000 * SCALE)
SMALL_IMPORT_ITEMS = int(10_000 * SCALE)
QUEUE_QUERIES = int(100_000 * SCALE)
QUEUE_LABELS = int(200_000 * SCALE)
LATENCY_SAMPLES = 60

ERROR_CLASSES = ["join_fanout", "missing_filter", "wrong_measure", "aggregation_grain", "dropped_rows"]
TABLES = ["orders", "order_items", "customers", "products", "regions"]


def _setup_django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    if not apps.ready:
        django.setup()


def write_gold_file(path: Path, items: int, seed: int = 7) -> None:
    """Write a realistic JSONL gold file line by line: varied joins, filters and literals."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(items):
            table, other = rng.sample(TABLES, 2)
            wrong = rng.random() < 0.3
            sql = (
                f"SELECT t.region, SUM(t.amount) AS total FROM {table} t "
                f"JOIN {other} o ON o.id = t.{other[:-1]}_id "
                f"WHERE t.created_at >= '2024-{rng.randint(1, 12):02d}-01' AND t.amount > {rng.randint(1, 500)} "
                f"GROUP BY t.region ORDER BY total DESC LIMIT {rng.randint(5, 50)}"
            )
            record = {
                "id": f"bench-{i}",
                "question": f"Total amount per region in {table} since month {i % 12 + 1}, item {i}",
                "sql": sql,
                "label": "wrong" if wrong else "correct",
                "error_class": rng.choice(ERROR_CLASSES) if wrong else None,
                "reference_sql": "SELECT 1" if wrong else None,
            }
            out.write(json.dumps(record) + "\n")


def _child_import(path: str, gold_set: str) -> None:
    """Run in a subprocess: import one file and print the elapsed seconds as JSON."""
    _setup_django()

    started = time.perf_counter()
    version = goldset_import(path_or_file=path, gold_set_name=gold_set)
    elapsed = time.perf_counter() - started
    # Its own peak and its fingerprinting pool's (forked from it, so never the bench's parent's).
    pool = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    peak = max(own_peak_rss_mb(), pool)
    print(json.dumps({"seconds": elapsed, "items": version.items.count(), "peak_rss_mb": peak}))


def _database_url(connection) -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = f"{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    return f"postgresql://{db.get('USER') or 'postgres'}{password}@{host}/{db['NAME']}"


def _import_in_subprocess(connection, path: Path, gold_set: str) -> tuple[float, float]:
    """Return (seconds, peak RSS in MB) of importing `path` in a fresh process."""
    env = {**os.environ, "DATABASE_URL": _database_url(connection), "DJANGO_SETTINGS_MODULE": "config.settings"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.bench_labelling", "--child-import", str(path), gold_set],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"import subprocess failed: {stderr[-2000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    # The child's own reading: RUSAGE_CHILDREN here would be the largest of every child this
    # process ever waited for (an earlier benchmark's too), and carries this process's size
    # across the child's exec.
    return result["seconds"], result["peak_rss_mb"]


def _populate_queue(gold_set, labellers) -> None:
    """Create 100,000 queries and 200,000 labels (current and history) with bulk inserts.

    92% of the queries are done (two current labels each); the labeller "me"
    (labellers[0]) labelled two fifths of them and most of the history, so the queue
    has to look past many of "my" items. Counts are written at insert, as the services
    keep them, so the table holds no artificial dead row versions.
    """

    rng = random.Random(11)
    batch = min(10_000, QUEUE_QUERIES)
    done = int(QUEUE_QUERIES * 0.92)
    for start in range(0, QUEUE_QUERIES, batch):
        queries = []
        for i in range(start, start + batch):
            key = rng.random()
            queries.append(
                Query(
                    question=f"q{i}",
                    sql=f"SELECT {i}",
                    gold_set=gold_set,
                    external_id=f"queue-{i}",
                    fingerprint=f"{i:064x}",
                    overlap_key=key,
                    wants_second_label=key < gold_set.overlap_share,
                    label_count=2 if i < done else 0,
                )
            )
        Query.objects.bulk_create(queries)
    query_ids = list(Query.objects.filter(gold_set=gold_set).order_by("id").values_list("id", flat=True))
    labels = []
    for n, query_id in enumerate(query_ids[:done]):
        for labeller in (labellers[n % len(labellers)], labellers[(n + 1) % len(labellers)]):
            labels.append(Label(query_id=query_id, labeller=labeller, decision="correct", is_current=True))
    while len(labels) < QUEUE_LABELS:  # the rest is history: superseded labels
        query_id = query_ids[rng.randrange(done)]
        labels.append(Label(query_id=query_id, labeller=labellers[0], decision="unsure", is_current=False))
    for start in range(0, len(labels), batch):
        Label.objects.bulk_create(labels[start : start + batch])


def _queue_latency(gold_set, me) -> tuple[float, float]:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE labelling_query")
            cursor.execute("VACUUM ANALYZE labelling_label")
    queue_item_get_next(user=me, gold_set=gold_set)  # warm the connection and caches
    samples = []
    for _ in range(LATENCY_SAMPLES):
        started = time.perf_counter()
        item = queue_item_get_next(user=me, gold_set=gold_set)
        samples.append((time.perf_counter() - started) * 1000)
        assert item is not None
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def run() -> list[dict]:
    _setup_django()

    test_settings = connection.settings_dict.setdefault("TEST", {})
    original_name = connection.settings_dict["NAME"]
    if connection.vendor == "sqlite":
        test_settings["NAME"] = str(settings.VAR_DIR / "bench_labelling.sqlite3")
    else:
        test_settings["NAME"] = f"{test_settings.get('NAME') or 'test_docket'}_bench_labelling"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            small, large = Path(tmp) / "small.jsonl", Path(tmp) / "large.jsonl"
            write_gold_file(small, SMALL_IMPORT_ITEMS)
            write_gold_file(large, IMPORT_ITEMS)
            _, small_rss = _import_in_subprocess(connection, small, "bench-small")
            seconds, large_rss = _import_in_subprocess(connection, large, "bench-large")
        users = [get_user_model().objects.create_user(username=f"bench-labeller-{i}") for i in range(5)]
        gold_set = GoldSet.objects.create(name="bench-queue", overlap_share=0.2)
        _populate_queue(gold_set, users)
        p50, p95 = _queue_latency(gold_set, users[0])
    finally:
        connection.creation.destroy_test_db(original_name, verbosity=0)
    return [
        {"name": "labelling.import_50k_jsonl", "value": round(seconds, 2), "unit": "s", "target_op": "<", "target": 60},
        {
            "name": "labelling.import_rows_per_second",
            "value": round(IMPORT_ITEMS / seconds),
            "unit": "rows/s",
            "target_op": ">",
            "target": IMPORT_ITEMS / 60,
        },
        {
            "name": "labelling.import_50k_peak_rss",
            "value": round(large_rss, 1),
            "unit": "MB",
            "target_op": "<",
            "target": 300,
        },
        {
            "name": "labelling.import_peak_rss_50k_over_10k",
            "value": round(large_rss / small_rss, 2),
            "unit": "ratio",
            "target_op": "<",
            "target": 1.5,
        },
        {"name": "labelling.queue_next_item_p50", "value": round(p50, 2), "unit": "ms", "target_op": "<", "target": 50},
        {"name": "labelling.queue_next_item_p95", "value": round(p95, 2), "unit": "ms", "target_op": "<", "target": 50},
    ]


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--child-import":
        _child_import(sys.argv[2], sys.argv[3])
    else:
        for row in run():
            print(json.dumps(row))
