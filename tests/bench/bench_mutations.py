"""Benchmark: mutation generation (issue 19) per 1,000 source items, against parsing alone.

Generation is every operator's sqlglot transform on each correct demo query plus rendering
each variant back to SQL; execution (truth by execution) is not included, since it is the
warehouse's time. The baseline, measured in the same run and interleaved, is sqlglot
parsing and rendering the same texts once: the ratio says what the operators cost on top
of reading the query, so a busy machine does not look like a regression. No target: the
numbers are reported.
"""

import json
import tempfile
import time
from pathlib import Path

import sqlglot

import tests.bench.django_ready  # noqa: F401 — sets Django up before the apps' modules load
from labelling.demo import DEMO_GOLD_FILE
from labelling.mutation_operators import Schema, operators_for, variants_of
from probes.catalogue import introspect_sqlite
from probes.demo_warehouse import build_demo_warehouse

ITEMS = 1000
ROUNDS = 3


def _demo_sources() -> tuple[list[str], dict]:
    """Return 1,000 correct demo SQL texts (the demo's, repeated) and the demo catalogue snapshot."""
    items = [json.loads(line) for line in DEMO_GOLD_FILE.read_text().splitlines() if line.strip()]
    correct = [item["sql"] if item["label"] == "correct" else item["reference_sql"] for item in items]
    correct = [sql for sql in correct if sql]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "demo.sqlite3"
        build_demo_warehouse(path)
        snapshot = introspect_sqlite(f"sqlite:///{path.resolve()}")
    return [correct[i % len(correct)] for i in range(ITEMS)], snapshot


def run() -> list[dict]:
    texts, snapshot = _demo_sources()
    schema = Schema.from_snapshot(snapshot)
    operators = operators_for()
    parse_times, mutate_times, variants = [], [], 0
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for sql in texts:
            sqlglot.parse_one(sql, read="sqlite").sql(dialect="sqlite")
        parse_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        variants = 0
        for position, sql in enumerate(texts):
            tree = sqlglot.parse_one(sql, read="sqlite")
            for variant in variants_of(tree, schema, operators, position):
                variant.sql.sql(dialect="sqlite")
                variants += 1
        mutate_times.append(time.perf_counter() - started)
    mutate, parse = min(mutate_times), min(parse_times)
    return [
        {"name": "mutation generation per 1000 items", "value": round(mutate, 3), "unit": "s"},
        {"name": "mutation generation / parse+render, ratio", "value": round(mutate / parse, 2), "unit": "ratio"},
        {"name": "mutation candidates per 1000 items", "value": variants, "unit": "variants"},
    ]


if __name__ == "__main__":
    for result in run():
        print(result)
