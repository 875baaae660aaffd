"""Benchmark: the calibration report on 1,000,000 verdicts vs merely fetching them.

10 judges × 20,000 items × 5 repeats, in one completed run (BENCH_REPORT_VERDICTS changes
the size: items = verdicts ÷ 50). In the same process we time (a) the floor: the report's
own verdict SELECT — exactly the columns it fetches, packed the same way
(`judges.verdict_rows.verdict_rows_sql`) — into numpy arrays, and (b) `judges.report.build_report`.
Target: (b) / (a) ≤ 1.5 (moonshot 1.2), and the report's process peaks under 400 MB.
Fill and absolute times are printed as informational lines: no target, never counted.
Runs on SQLite, and on PostgreSQL when a server answers.

Each database gets a fresh one of its own (a temp SQLite file; PostgreSQL database
`metrics_bench`), migrated, bulk-filled with executemany / COPY, and dropped afterwards.
Phases run in child processes so one Django settings module serves each database and the
report's peak memory is measured in a process that did nothing else.

    python -m tests.bench.bench_report          # prints the results as JSON lines
"""

from __future__ import annotations

import json
import os
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
import numpy as np
import psycopg
from django.core.management import call_command
from django.db import connection, transaction

from judges.calibration_data import selected_run_ids
from judges.models import Backend, CalibrationRun, Judge, JudgeVersion, RunStatus, Verdict
from judges.report import build_report
from judges.verdict_rows import fetch_columns, verdict_rows_sql
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Query

ROOT = Path(__file__).resolve().parents[2]
JUDGES, REPEATS = 10, 5
VERDICTS = int(os.environ.get("BENCH_REPORT_VERDICTS", "1000000"))
ITEMS = max(VERDICTS // (JUDGES * REPEATS), 10)
WRONG_SHARE = 0.2
PG_ADMIN_DSN = os.environ.get("BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
PG_DATABASE = "metrics_bench"
GOLD_SET = "bench-report"
TIMING_ROUNDS = 3


# --- child-process phases -----------------------------------------------------------------


def django_setup():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    django.setup()


def phase_fill() -> dict:
    """Migrate the empty database and bulk-insert the benchmark's gold set and verdicts."""
    django_setup()

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    fill_database()
    return {"fill_seconds": time.perf_counter() - started}


def fill_database() -> None:
    rng = np.random.default_rng(2026)
    now = "2026-01-01 00:00:00+00:00"
    with transaction.atomic():
        gold_set = GoldSet.objects.create(name=GOLD_SET)
        version = GoldSetVersion.objects.create(gold_set=gold_set, number=1)
        versions = []
        for index in range(JUDGES):
            judge = Judge.objects.create(name=f"bench-judge-{index:02d}")
            versions.append(JudgeVersion.objects.create(judge=judge, number=1, backend=Backend.REPLAY))
        run = CalibrationRun.objects.create(
            gold_set_version=version, label="bench", status=RunStatus.COMPLETED, repeats=REPEATS
        )
        run.judge_versions.set(versions)
        query_rows = [
            (f"question {i}", f"SELECT {i}", "sqlite", "gold", gold_set.pk, f"item-{i:05d}", "", "", "{}", now, 0, 1.0,
             False)
            for i in range(ITEMS)
        ]  # fmt: skip
        insert_rows(
            Query._meta.db_table,
            "question, sql, dialect, source, gold_set_id, external_id, fingerprint, reference_sql, metadata, "
            "created_at, label_count, overlap_key, wants_second_label",
            query_rows,
        )
        query_ids = list(Query.objects.filter(gold_set=gold_set).order_by("pk").values_list("pk", flat=True))
        is_wrong = rng.random(ITEMS) < WRONG_SHARE
        classes = ["join_fanout", "misread_intent", "missing_filter", "wrong_measure"]
        item_rows = [
            (version.pk, qid, "wrong" if wrong else "correct", classes[i % 4] if wrong else "")
            for i, (qid, wrong) in enumerate(zip(query_ids, is_wrong, strict=True))
        ]
        insert_rows(GoldSetVersionItem._meta.db_table, "version_id, query_id, decision, error_class", item_rows)
        verdict_columns = (
            "judge_version_id, query_id, run_id, repeat, decision, reason, error_class_guess, hypotheses, "
            "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, latency_ms, "
            "model_reported, raw_response, context, created_at, simulated, endpoint, request_tail"
        )
        for judge_index, judge_version in enumerate(versions):
            catch, false_reject = 0.4 + 0.04 * judge_index, 0.05 + 0.01 * judge_index
            item_reject = np.where(is_wrong, catch, false_reject) + rng.normal(0, 0.1, ITEMS)
            rows = []
            for repeat in range(REPEATS):
                draws = rng.random(ITEMS)
                errors = rng.random(ITEMS) < 0.01
                latency = rng.lognormal(7.5, 0.4, ITEMS)
                for i, qid in enumerate(query_ids):
                    decision = "error" if errors[i] else ("reject" if draws[i] < item_reject[i] else "accept")
                    rows.append(
                        (judge_version.pk, qid, run.pk, repeat, decision, "", "", "[]", 3900, 180, 0, 0,
                         "0.07200000", float(latency[i]), "", "{}", "{}", now, False, "", "{}")
                    )  # fmt: skip
            insert_rows(Verdict._meta.db_table, verdict_columns, rows)
    # Fresh planner statistics, as autovacuum would leave them after a load this size.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def insert_rows(table: str, columns: str, rows: list[tuple]) -> None:
    """Insert many rows fast: COPY on PostgreSQL, executemany on SQLite."""

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(rows[0]))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def fetch_rows_into_arrays(run_ids: list[int]):
    """The floor: the report's own verdict SELECT (same columns, same packing) into numpy arrays.

    It uses the report's fetch path (chunked fetchmany → np.fromiter) and SQL text, so the
    ratio measures what the report adds to fetching, not a difference in what is fetched.
    """

    max_judge_version_id = max(
        CalibrationRun.judge_versions.through.objects.filter(calibrationrun_id__in=run_ids).values_list(
            "judgeversion_id", flat=True
        )
    )
    sql, dtypes, _ = verdict_rows_sql(run_ids, max_judge_version_id)
    return fetch_columns(sql, run_ids, dtypes)


def gold_set_version():
    return GoldSetVersion.objects.select_related("gold_set").get(gold_set__name=GOLD_SET, number=1)


def phase_time() -> dict:
    """Time fetch and report alternately, TIMING_ROUNDS each; return the medians."""
    django_setup()

    version = gold_set_version()
    run_ids = selected_run_ids(version)
    first = fetch_rows_into_arrays(run_ids)[0]  # warm the database's cache for both
    assert len(first) == JUDGES * ITEMS * REPEATS, len(first)
    fetch_times, report_times = [], []
    for _ in range(TIMING_ROUNDS):
        started = time.perf_counter()
        fetch_rows_into_arrays(run_ids)
        fetch_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        report = build_report(gold_set_version=version, generation_cost_usd=0.0125, baseline="bench-judge-00")
        report_times.append(time.perf_counter() - started)
    assert len(report["judges"]) == JUDGES and len(report["pairs"]) == JUDGES * (JUDGES - 1) // 2
    return {"fetch_seconds": statistics.median(fetch_times), "report_seconds": statistics.median(report_times)}


def phase_memory() -> dict:
    """Build the report once in a fresh process; return its peak resident memory."""

    django_setup()

    version = gold_set_version()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    build_report(gold_set_version=version, generation_cost_usd=0.0125)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"peak_rss_mb": peak, "rss_before_report_mb": before}


PHASES = {"fill": phase_fill, "time": phase_time, "memory": phase_memory}


# --- parent: one database at a time --------------------------------------------------------


def run_phase(phase: str, database_url: str) -> dict:
    env = dict(os.environ, DATABASE_URL=database_url, DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING")
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.bench_report", "--phase", phase],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench phase {phase} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(backend: str, database_url: str) -> list[dict]:
    filled = run_phase("fill", database_url)
    timed = run_phase("time", database_url)
    memory = run_phase("memory", database_url)
    ratio = timed["report_seconds"] / timed["fetch_seconds"]
    print(
        f"{backend}: filled in {filled['fill_seconds']:.0f}s; fetch {timed['fetch_seconds']:.2f}s, "
        f"report {timed['report_seconds']:.2f}s (medians of {TIMING_ROUNDS})",
        file=sys.stderr,
    )
    size = f"{JUDGES * ITEMS * REPEATS / 1e6:g}m" if JUDGES * ITEMS * REPEATS >= 1e6 else f"{JUDGES * ITEMS * REPEATS}"
    prefix = f"report_{size}_verdicts_{backend}"
    return [
        {"name": f"{prefix}_vs_floor_ratio", "value": round(ratio, 3), "unit": "x", "target_op": "<=", "target": 1.5},
        # Informational: no target, not counted by run_all.
        {"name": f"{prefix}_floor_fetch_seconds", "value": round(timed["fetch_seconds"], 3), "unit": "s"},
        {"name": f"{prefix}_seconds", "value": round(timed["report_seconds"], 3), "unit": "s"},
        {"name": f"{prefix}_fill_seconds", "value": round(filled["fill_seconds"], 1), "unit": "s"},
        {
            "name": f"{prefix}_peak_rss",
            "value": round(memory["peak_rss_mb"], 1),
            "unit": "MB",
            "target_op": "<",
            "target": 400,
        },  # fmt: skip
    ]


def postgres_reachable() -> bool:
    try:
        with psycopg.connect(PG_ADMIN_DSN, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return False


def recreate_postgres_database(drop_only: bool = False) -> str:
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE}")
        if not drop_only:
            conn.execute(f"CREATE DATABASE {PG_DATABASE}")
    return PG_ADMIN_DSN.rsplit("/", 1)[0] + f"/{PG_DATABASE}"


def run() -> list[dict]:
    """Measure on SQLite, then on PostgreSQL if reachable; return the benchmark records."""
    results = []
    with tempfile.TemporaryDirectory(prefix="metrics-bench-") as folder:
        results += measure("sqlite", f"sqlite:///{folder}/bench.sqlite3")
    if postgres_reachable():
        try:
            results += measure("postgresql", recreate_postgres_database())
        finally:
            recreate_postgres_database(drop_only=True)
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--phase":
        sys.path.insert(0, str(ROOT))
        print(json.dumps(PHASES[sys.argv[2]]()))
    else:
        for record in run():
            print(json.dumps(record))
