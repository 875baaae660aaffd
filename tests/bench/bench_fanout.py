"""Benchmark: fan-out probes against the demo warehouse on PostgreSQL (target p50 < 100 ms).

Builds the demo warehouse into database `probes_bench_demo`, detects fan-out in every
`join_fanout` item of the demo gold set and times each generated probe through the whole
read-only path (guard, connect, read-only transaction, query, rollback), plus detection
alone (AST + catalogue, no database).
"""

import json
import os
import statistics
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

import django
import psycopg
from psycopg import sql as pg_sql

from probes.catalogue import introspect_postgres
from probes.demo_warehouse import build_demo_warehouse, create_reader_role
from probes.execution import run_readonly
from probes.fanout import detect_fanout
from probes.models import Catalogue, Warehouse

REPEATS = 5
GOLD = Path(__file__).resolve().parents[2] / "labelling" / "data" / "demo_gold.jsonl"


def _fresh_database(admin: str, name: str) -> str:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(pg_sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pg_sql.Identifier(name)))
        conn.execute(pg_sql.SQL("CREATE DATABASE {}").format(pg_sql.Identifier(name)))
    return urlunparse(urlparse(admin)._replace(path="/" + name))


def run() -> list[dict]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    django.setup()

    admin = os.environ.get("TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
    dsn = _fresh_database(admin, "probes_bench_demo")
    build_demo_warehouse(dsn)
    dsn = create_reader_role(dsn, role="probes_bench_reader")  # model SQL runs as a read-only role
    os.environ["WAREHOUSE_PROBES_BENCH_DEMO_URL"] = dsn
    warehouse = Warehouse(name="probes-bench-demo", dialect="postgres")
    catalogue = Catalogue(version=1, snapshot=introspect_postgres(dsn))
    items = [json.loads(line) for line in GOLD.read_text().splitlines() if line.strip()]
    fanouts = [item["sql"] for item in items if item.get("error_class") == "join_fanout"]
    detect, probe, confirmed = [], [], 0
    for repeat in range(REPEATS):
        for sql in fanouts:
            started = time.perf_counter()
            hypothesis = detect_fanout(sql, catalogue, dialect="postgres")
            detect.append(time.perf_counter() - started)
            if not hypothesis.suspected:
                continue
            started = time.perf_counter()
            result = run_readonly(warehouse=warehouse, sql=hypothesis.probe_sql, row_cap=2)
            probe.append(time.perf_counter() - started)
            if repeat == 0 and result.executed:
                confirmed += result.rows[0][0] > result.rows[0][1]
    return [
        {
            "name": "fan-out probe p50, demo warehouse on PostgreSQL (guard + read-only tx + query)",
            "value": round(statistics.median(probe) * 1000, 2),
            "unit": "ms",
            "target_op": "<",
            "target": 100,
            "note": f"{len(fanouts)} join_fanout gold items, {confirmed} confirmed",
        },
        {
            "name": "fan-out detection p50 (AST + catalogue, no database)",
            "value": round(statistics.median(detect) * 1000, 3),
            "unit": "ms",
            "target_op": "<",
            "target": 5,
        },
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
