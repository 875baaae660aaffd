"""Benchmark: the guard plus the verifier's non-EXPLAIN checks against sqlglot parsing alone.

Issue 6 targets, on a typical 3-join query: p50 under 5 ms, and at most 3x the time sqlglot
takes to parse the same text, measured side by side in the same run (interleaved, so a
busy machine slows both alike).
"""

import statistics
import tempfile
import time
from pathlib import Path

THREE_JOINS = (
    "SELECT c.name, o.status, SUM(oi.quantity * oi.unit_price) AS revenue, COUNT(DISTINCT s.shipment_id) AS shipments "
    "FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
    "JOIN order_items oi ON oi.order_id = o.order_id "
    "LEFT JOIN shipments s ON s.order_id = o.order_id "
    "WHERE o.order_date >= '2026-01-01' AND o.status <> 'cancelled' "
    "GROUP BY c.name, o.status ORDER BY revenue DESC LIMIT 20"
)
REPEATS = 400


def _django():
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()


def _shop_catalogue() -> dict:
    from probes.catalogue import introspect_sqlite
    from probes.tests import shop

    with tempfile.TemporaryDirectory() as directory:
        return introspect_sqlite(shop.create_sqlite(Path(directory) / "shop.sqlite3"))


def _p50_ms(samples):
    return statistics.median(samples) * 1000


def run() -> list[dict]:
    _django()
    import sqlglot

    from probes.guard import guard_sql
    from probes.models import Catalogue
    from probes.verifier import verify

    # An unsaved Catalogue, as callers pass one: its index is built once and kept on it.
    catalogue = Catalogue(version=1, snapshot=_shop_catalogue())
    rules = {"explain": False}
    assert verify(THREE_JOINS, catalogue, rules=rules).passed
    parse, checked, guard = [], [], []
    for _ in range(REPEATS):
        started = time.perf_counter()
        sqlglot.parse_one(THREE_JOINS, read="postgres")
        parse.append(time.perf_counter() - started)
        started = time.perf_counter()
        verify(THREE_JOINS, catalogue, rules=rules)  # parses once, guards the tree, checks
        checked.append(time.perf_counter() - started)
        started = time.perf_counter()
        guard_sql(THREE_JOINS, "postgres")
        guard.append(time.perf_counter() - started)
    verify_p50, parse_p50 = _p50_ms(checked), _p50_ms(parse)
    return [
        {
            "name": "guard+verifier (non-EXPLAIN) p50, 3-join query",
            "value": round(verify_p50, 3),
            "unit": "ms",
            "target_op": "<",
            "target": 5,
        },
        {
            "name": "guard+verifier / sqlglot parse alone, p50 ratio",
            "value": round(verify_p50 / parse_p50, 2),
            "unit": "x",
            "target_op": "<=",
            "target": 3,
        },
        {
            "name": "sqlglot parse alone p50, 3-join query (baseline)",
            "value": round(parse_p50, 3),
            "unit": "ms",
            "target_op": "<",
            "target": 5,
        },
        {
            "name": "guard_sql then verify (two parses) / parse alone, p50 ratio",
            "value": round((verify_p50 + _p50_ms(guard)) / parse_p50, 2),
            "unit": "x",
            "target_op": "<=",
            "target": 3,
        },
        {
            "name": "guard_sql alone p50, 3-join query",
            "value": round(_p50_ms(guard), 3),
            "unit": "ms",
            "target_op": "<",
            "target": 5,
        },
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
