"""Build large benchmark data fast, on a scratch database of its own, and time it in child processes.

- `bulk_insert(model, columns, rows)`: COPY on PostgreSQL, executemany on SQLite. Only the
  named columns are given per row; every other column takes the model's default, prepared
  once (so a column another change adds with a default needs no edit here).
- `gold_version_create`, `judge_versions_create`, `completed_run_add`: a gold-set version
  of N items, M judges, and a completed run of R repeats with its verdicts, drawn so each
  judge catches some wrong items and rejects a few correct ones.
- `ScratchDatabase`: a fresh PostgreSQL database (or a SQLite file) for one benchmark,
  dropped afterwards; `run_phase` runs `python -m tests.bench.<module> --phase NAME ...` on it
  in a child process (one Django settings per database; a fresh process measures memory).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import psycopg
from django.db import connection, models
from django.utils import timezone

from judges.models import Backend, CalibrationRun, Judge, JudgeVersion, RunStatus, Verdict
from judges.verdict_rows import fetch_columns, verdict_rows_sql
from judges.verdict_sums import record_verdict_sums
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Query

ROOT = Path(__file__).resolve().parents[2]
PG_ADMIN_DSN = os.environ.get("BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
ERROR_CLASSES = ["join_fanout", "misread_intent", "missing_filter", "wrong_measure"]
WRONG_SHARE = 0.2


def prepared_default(field, now):
    """The value the ORM would store for a field left out, prepared for the database."""
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        value = now
    elif field.has_default():
        value = field.get_default()
    elif field.null:
        return None
    elif isinstance(field, models.CharField | models.TextField):
        value = ""
    else:
        raise ValueError(f"{field.model.__name__}.{field.name} has no default: name it in the columns")
    return field.get_db_prep_save(value, connection)


def bulk_insert(model, columns: list[str], rows) -> None:
    """Insert rows (tuples of plain values, one per named column) fast; other columns get their defaults."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key or f.attname in columns]
    named = {f.attname: f for f in fields}
    unknown = set(columns) - set(named)
    if unknown:
        raise ValueError(f"{model.__name__} has no columns {sorted(unknown)}")
    now = timezone.now()
    rest = [f for f in fields if f.attname not in columns]
    defaults = tuple(prepared_default(f, now) for f in rest)
    column_list = ", ".join(connection.ops.quote_name(named[c].column) for c in columns) + "".join(
        ", " + connection.ops.quote_name(f.column) for f in rest
    )
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({column_list}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row((*row, *defaults))
            return
        marks = ", ".join(["%s"] * (len(columns) + len(rest)))
        batch = []
        for row in rows:
            batch.append((*row, *defaults))
            if len(batch) >= 50_000:
                cursor.executemany(f"INSERT INTO {table} ({column_list}) VALUES ({marks})", batch)
                batch = []
        if batch:
            cursor.executemany(f"INSERT INTO {table} ({column_list}) VALUES ({marks})", batch)


def gold_version_create(name: str, items: int, seed: int = 2026) -> tuple[GoldSetVersion, np.ndarray, np.ndarray]:
    """Create a gold set's version 1 of `items` items; return it, its query ids and which items are wrong."""
    rng = np.random.default_rng(seed)
    gold_set = GoldSet.objects.create(name=name)
    version = GoldSetVersion.objects.create(gold_set=gold_set, number=1)
    bulk_insert(
        Query,
        ["question", "sql", "gold_set_id", "external_id", "overlap_key"],
        ((f"question {i}", f"SELECT {i}", gold_set.pk, f"{name}-{i:07d}", float(i % 97) / 97) for i in range(items)),
    )
    query_ids = np.array(Query.objects.filter(gold_set=gold_set).order_by("pk").values_list("pk", flat=True))
    is_wrong = rng.random(items) < WRONG_SHARE
    bulk_insert(
        GoldSetVersionItem,
        ["version_id", "query_id", "decision", "error_class"],
        (
            (version.pk, int(qid), "wrong" if wrong else "correct", ERROR_CLASSES[i % 4] if wrong else "")
            for i, (qid, wrong) in enumerate(zip(query_ids, is_wrong, strict=True))
        ),
    )
    return version, query_ids, is_wrong


def judge_versions_create(prefix: str, count: int, backend: str = Backend.REPLAY) -> list[JudgeVersion]:
    return [
        JudgeVersion.objects.create(
            judge=Judge.objects.create(name=f"{prefix}-{index:02d}"), number=1, backend=backend, is_simulated=True
        )
        for index in range(count)
    ]


def completed_run_add(version, judge_versions, query_ids, is_wrong, *, repeats: int, seed: int, label: str = ""):
    """Add a completed run of the judges × items × repeats, its verdicts bulk-inserted; return it."""
    rng = np.random.default_rng(seed)
    run = CalibrationRun.objects.create(
        gold_set_version=version, label=label, status=RunStatus.COMPLETED, repeats=repeats
    )
    run.judge_versions.set(judge_versions)
    items = len(query_ids)
    columns = ["judge_version_id", "query_id", "run_id", "repeat", "decision", "input_tokens", "output_tokens"]
    columns += ["cost_usd", "latency_ms"]

    def rows():
        for index, judge_version in enumerate(judge_versions):
            catch, false_reject = 0.4 + 0.04 * index, 0.05 + 0.01 * index
            item_reject = np.where(is_wrong, catch, false_reject) + rng.normal(0, 0.1, items)
            for repeat in range(repeats):
                rejects = rng.random(items) < item_reject
                errors = rng.random(items) < 0.01
                latency = rng.lognormal(7.5, 0.4, items)
                for i in range(items):
                    decision = "error" if errors[i] else ("reject" if rejects[i] else "accept")
                    yield (judge_version.pk, int(query_ids[i]), run.pk, repeat, decision, 3900, 180, "0.07200000",
                           float(latency[i]))  # fmt: skip

    bulk_insert(Verdict, columns, rows())
    record_verdict_sums([run.pk])  # as a run's completion does
    return run


def verdicts_fetch_floor(run_ids: list[int], expected_rows: int | None = None):
    """The floor: the report's own verdict SELECT (same columns, same packing) into numpy arrays.

    It uses the report's fetch path (a server-side cursor's chunks → np.fromiter, filled in
    place when `expected_rows` is given, as the report knows its count) and SQL text, so a
    ratio against it measures what a page or report adds to fetching, not a difference in
    what is fetched.
    """
    max_judge_version_id = max(
        CalibrationRun.judge_versions.through.objects.filter(calibrationrun_id__in=run_ids).values_list(
            "judgeversion_id", flat=True
        )
    )
    sql, dtypes, _ = verdict_rows_sql(run_ids, max_judge_version_id)
    return fetch_columns(sql, run_ids, dtypes, expected_rows=expected_rows)


def size_label(count: int) -> str:
    """1,000,000 → "1m", 100,000 → "100k": how a bench line names a size."""
    if count >= 1_000_000:
        return f"{count / 1e6:g}m"
    return f"{count / 1e3:g}k" if count >= 1000 else str(count)


def analyze() -> None:
    """Fresh planner statistics, as autovacuum would leave them after a load this size."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


class ScratchDatabase:
    """A database of the benchmark's own: PostgreSQL when a server answers, else a SQLite file."""

    def __init__(self, name: str, vendor: str | None = None):
        self.name = name
        self.vendor = vendor or ("postgresql" if postgres_reachable() else "sqlite")
        self.folder = None

    def __enter__(self) -> ScratchDatabase:
        if self.vendor == "postgresql":
            self.url = self._recreate(drop_only=False)
        else:
            self.folder = tempfile.TemporaryDirectory(prefix=f"{self.name}-")
            self.url = f"sqlite:///{self.folder.name}/bench.sqlite3"
        return self

    def __exit__(self, *exc) -> None:
        if self.vendor == "postgresql":
            self._recreate(drop_only=True)
        else:
            self.folder.cleanup()

    def _recreate(self, *, drop_only: bool) -> str:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
            if not drop_only:
                conn.execute(f"CREATE DATABASE {self.name}")
        return PG_ADMIN_DSN.rsplit("/", 1)[0] + f"/{self.name}"

    def run_phase(self, module: str, phase: str, *args) -> dict:
        return run_phase(module, phase, self.url, *args)


def postgres_reachable() -> bool:
    try:
        with psycopg.connect(PG_ADMIN_DSN, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return False


def run_phase(module: str, phase: str, database_url: str, *args) -> dict:
    """Run one phase of a benchmark module in a child process on the database; return its JSON."""
    env = dict(os.environ, DATABASE_URL=database_url, DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING")
    done = subprocess.run(
        [sys.executable, "-m", f"tests.bench.{module}", "--phase", phase, *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench phase {module} {phase} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def phased_main(run, phases: dict) -> None:
    """A benchmark module's `__main__`: one phase (`--phase NAME ARGS...`, its JSON on the last
    line, as `run_phase` reads it), or the whole benchmark, one JSON record per line."""
    if len(sys.argv) >= 3 and sys.argv[1] == "--phase":
        print(json.dumps(phases[sys.argv[2]](*sys.argv[3:])))
    else:
        for record in run():
            print(json.dumps(record))
