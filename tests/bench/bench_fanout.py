"""Benchmark: the fan-out probe against a shop warehouse on PostgreSQL (target p50 < 100 ms).

Uses the demo warehouse's shape (orders, order_items, shipments) at a few thousand orders,
loaded into database `probes_bench_shop`. Measures the whole read-only path the probe takes
(guard, connect, read-only transaction, query, rollback) and detection alone.
"""

import os
import statistics
import time

REPEATS = 40
ORDERS = 5000
REVENUE_ACROSS_SHIPMENTS = (
    "SELECT c.name, SUM(oi.quantity * oi.unit_price) FROM customers c "
    "JOIN orders o ON o.customer_id = c.customer_id JOIN order_items oi ON oi.order_id = o.order_id "
    "JOIN shipments s ON s.order_id = o.order_id GROUP BY c.name"
)


def run() -> list[dict]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from probes.catalogue import introspect_postgres
    from probes.execution import run_readonly
    from probes.fanout import detect_fanout
    from probes.models import Catalogue, Warehouse
    from probes.tests import shop

    admin = os.environ.get("TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
    try:
        dsn = shop.create_postgres(admin, "probes_bench_shop", orders=ORDERS)
    except Exception as exc:  # noqa: BLE001 - report, do not crash the bench run
        return [{"name": "fan-out probe p50 on PostgreSQL", "value": None, "unit": "ms", "target_op": "<",
                 "target": 100, "error": f"PostgreSQL unavailable: {exc}"}]
    os.environ["WAREHOUSE_PROBES_BENCH_SHOP_URL"] = dsn
    warehouse = Warehouse(name="probes-bench-shop", dialect="postgres")
    catalogue = Catalogue(version=1, snapshot=introspect_postgres(dsn))
    detect, probe = [], []
    figures = None
    for _ in range(REPEATS):
        started = time.perf_counter()
        hypothesis = detect_fanout(REVENUE_ACROSS_SHIPMENTS, catalogue, dialect="postgres")
        detect.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = run_readonly(warehouse=warehouse, sql=hypothesis.probe_sql, row_cap=2)
        probe.append(time.perf_counter() - started)
        figures = result.rows[0] if result.executed else result.error
    return [
        {"name": "fan-out probe p50 on PostgreSQL (guard + read-only transaction + query)",
         "value": round(statistics.median(probe) * 1000, 2), "unit": "ms", "target_op": "<", "target": 100,
         "note": f"{ORDERS} orders; probe returned {figures}"},
        {"name": "fan-out detection p50 (AST + catalogue, no database)",
         "value": round(statistics.median(detect) * 1000, 3), "unit": "ms", "target_op": None, "target": None},
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
