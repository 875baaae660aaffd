"""Benchmark: the verifier's false-reject rate on defog's correct gold queries, by rule.

Every gold query is correct, so every rejection is a false reject. A strict rule costs on
the majority of traffic (seed 000): this makes the LIMIT rule's cost visible next to the
rest, with EXPLAIN against each defog schema loaded in PostgreSQL (`probes_<db>`).
"""

import os
import time

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

import django

from probes import defog
from probes.catalogue import introspect_postgres
from probes.demo_warehouse import create_reader_role
from probes.models import Catalogue, Warehouse
from probes.verifier import verify

# Rules a team turns on for itself: their false rejects on correct SQL are a cost to read, not a target.
OPT_IN_RULES = {"require_limit"}


def run() -> list[dict]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    django.setup()

    admin = os.environ.get("TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
    if not defog.available():
        raise RuntimeError(f"defog data set not found at {defog.DEFOG_DIR}")
    warehouses, catalogues = {}, {}
    for db in defog.DATABASES:
        # EXPLAIN runs as a read-only role, as in production (one role, the same password in every database).
        dsn = create_reader_role(
            defog.load_postgres(db, admin), role="probes_bench_reader", tables=None, password="bench"
        )
        name = f"defog-{db}"
        os.environ["WAREHOUSE_" + name.upper().replace("-", "_") + "_URL"] = dsn
        warehouses[db] = Warehouse(name=name, dialect="postgres")
        catalogues[db] = Catalogue(version=1, snapshot=introspect_postgres(dsn))
    queries = defog.gold_queries("postgres")
    started = time.perf_counter()
    results = [
        verify(q.sql, catalogues[q.db], warehouse=warehouses[q.db], rules={"require_limit": True}) for q in queries
    ]
    elapsed = time.perf_counter() - started
    report = defog.false_reject_report(results)
    rows = [
        {
            # Informational: require_limit is a strict rule a team turns on, and its cost on
            # correct SQL is the figure to read (a target it can never meet would only hide
            # the lines that can be missed).
            "name": "defog gold (PostgreSQL): false-reject rate, all rules",
            "value": round(100 * report["false_reject_rate"], 1),
            "unit": "%",
            "note": f"{report['queries']} correct queries, require_limit on",
        },
        {
            "name": "defog gold (PostgreSQL): false-reject rate without require_limit",
            "value": round(100 * report["false_reject_rate_without_require_limit"], 1),
            "unit": "%",
            "target_op": "<=",
            "target": 1,
        },
    ]
    rows.append(
        {
            # The guard's allow-list inside the verifier: a refusal of correct SQL is a false one.
            "name": "defog gold (PostgreSQL): refused by the guard's allow-list",
            "value": round(100 * report["rate_by_rule"].get("read_only", 0.0), 1),
            "unit": "%",
            "target_op": "<=",
            "target": 0,
            "note": f"{report['by_rule'].get('read_only', 0)} queries",
        }
    )
    for rule, rate in report["rate_by_rule"].items():
        # A default rule above 1% of correct queries is marked MISSED; the opt-in strict
        # rule's cost is reported beside them, without a target.
        row = {
            "name": f"defog gold (PostgreSQL): false rejects by rule {rule}",
            "value": round(100 * rate, 1),
            "unit": "%",
            "note": f"{report['by_rule'][rule]} queries",
        }
        if rule not in OPT_IN_RULES:
            row.update(target_op="<=", target=1)
        rows.append(row)
    rows.append(
        {
            "name": "verify with EXPLAIN, mean per defog gold query",
            "value": round(elapsed / len(queries) * 1000, 2),
            "unit": "ms",
            "target_op": "<",
            "target": 100,
        }
    )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
