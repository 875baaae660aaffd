"""Issue 34: the demo gold set's SQL, transpiled by sqlglot to DuckDB, decides as on PostgreSQL.

Every item's SQL runs through `run_readonly` (the `run_sql` path) and `verify` (the
`verify_sql` path, EXPLAIN included) on the demo built on PostgreSQL (read by its reader
role) and as a DuckDB file (`load_demo_warehouse --duckdb`, opened read-only). Where the SQL
means the same on both, the decisions are the same: ran or not, the same rows
(order-insensitive, numbers to 2 decimals), the same verifier outcome and class. The
differences, each with its reason, are listed in `KNOWN_DIFFERENCES`. Then a calibration run
with the verifier and a hypothesis judge on a subset, on both, gives the same verdicts.
"""

import json

import pytest
import sqlglot

from probes.duckdb_warehouse import build_duckdb_demo
from probes.warehouses import warehouse_register
from tests.support.gold_parity import (
    ITEMS,
    calibration_decisions,
    calibration_items,
    decisions,
    differing_decisions,
    gold_judges,
    postgres_demo,
    vendor,
)

__all__ = ["postgres_demo", "vendor"]
pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

# item id → why DuckDB decides differently although the text was transpiled faithfully.
# None today: every item of the demo gold set decides on DuckDB as on PostgreSQL (rows, run
# outcome and class, verifier outcome and class). A new difference fails the test until listed.
KNOWN_DIFFERENCES: dict[str, str] = {}


@pytest.fixture
def duckdb_demo(tmp_path):
    path = tmp_path / "gold.duckdb"
    counts = build_duckdb_demo(str(path))
    assert counts["orders"] == 3000
    return warehouse_register(name="gold-duckdb", dialect="duckdb", dsn=f"duckdb:///{path}")


# Two engines, 223 items through run_sql and verify_sql each, then two small calibration runs.
@pytest.mark.timeout(1200)
def test_the_gold_set_transpiled_to_duckdb_decides_as_on_postgres(postgres_demo, duckdb_demo, vendor, tmp_path):
    on_postgres = decisions(postgres_demo, {item["id"]: item["sql"] for item in ITEMS})
    transpiled = {item["id"]: sqlglot.transpile(item["sql"], read="postgres", write="duckdb")[0] for item in ITEMS}
    on_duckdb = decisions(duckdb_demo, transpiled)
    differing = differing_decisions(on_postgres, on_duckdb, "duckdb", transpiled)
    unexplained = {item_id: d for item_id, d in differing.items() if item_id not in KNOWN_DIFFERENCES}
    assert unexplained == {}, json.dumps(unexplained, indent=1, default=str)[:20000]
    assert set(differing) == set(KNOWN_DIFFERENCES)  # each listed difference is still one
    # The decisions are not all alike: the gold set's wrong unknown_object items fail on both.
    assert {d[0] for d in on_duckdb.values()} >= {"passed", "failed"}

    # A calibration run with the verifier and a hypothesis judge (simulated model) on both, on every
    # fifth item plus the first three the verifier fails on PostgreSQL (every fifth are all accepted).
    failing = [item_id for item_id, decided in on_postgres.items() if decided[3] == "failed"][:3]
    assert len(failing) == 3
    items = calibration_items(set(KNOWN_DIFFERENCES) | set(failing))
    judges = gold_judges()
    run_pg = calibration_decisions(tmp_path, "gold-pg", {item["id"]: item["sql"] for item in ITEMS}, judges, items)
    run_duck = calibration_decisions(tmp_path, "gold-duckdb", transpiled, judges, items)
    assert len(run_pg) == len(run_duck) == 2 * len(items)
    verdicts_differing = {key: (run_pg[key], run_duck.get(key)) for key in run_pg if run_pg[key] != run_duck.get(key)}
    assert verdicts_differing == {}
    assert {decision for (judge, _), decision in run_duck.items() if judge == "gold-verifier"} >= {"accept", "reject"}
