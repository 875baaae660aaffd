"""Issue 34: the demo gold set's SQL, transpiled by sqlglot to MySQL, decides as on PostgreSQL.

Every item's SQL runs through `run_readonly` (the `run_sql` path) and `verify` (the
`verify_sql` path, EXPLAIN included) on the demo built on PostgreSQL and on MariaDB, each
read by its reader login. Where the SQL means the same on both, the decisions are the same:
ran or not, the same rows (order-insensitive, numbers to 2 decimals), the same verifier
outcome and class. The differences, each with its reason, are listed in `KNOWN_DIFFERENCES`.
"""

import json
import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import sqlglot
from psycopg import sql as pgsql

from judges.demo import run_inline
from judges.models import Verdict
from judges.services import judge_create
from judges.simulator import SimModel, Simulator, start_in_thread
from labelling.goldset_io import goldset_import
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, comparable_rows, create_reader_role
from probes.execution import run_readonly
from probes.mysql_demo import register_mysql_demo
from probes.outcome import execution_outcome
from probes.tests.mariadb import mariadb_demo
from probes.verifier import verify
from probes.warehouses import warehouse_register
from tests.support.services import require_postgres_server

__all__ = ["mariadb_demo"]
pytestmark = [pytest.mark.mariadb, pytest.mark.django_db]
GOLD_FILE = Path(__file__).resolve().parents[1] / "labelling" / "data" / "demo_gold.jsonl"
ITEMS = [json.loads(line) for line in GOLD_FILE.read_text().splitlines() if line.strip()]

# item id → why MySQL decides differently although the text was transpiled faithfully.
KNOWN_DIFFERENCES: dict[str, str] = {
    # MySQL and MariaDB refuse LIMIT inside an IN subquery (error 1235, "doesn't yet support
    # 'LIMIT & IN/ALL/ANY/SOME subquery'"): the SQL is wrong in this dialect, a `dialect`
    # failure when run, while the verifier's EXPLAIN gets the same answer.
    "demo-127": "LIMIT inside IN (subquery) is not supported by MySQL / MariaDB",
    # A login without a grant on a table is told "SELECT command denied" (1142) for a table that
    # does not exist, so as not to say which tables exist: running it is a privilege fault, not
    # unknown_object. The verifier, which reads the catalogue, still fails it as unknown_object.
    "demo-132": "MySQL answers 'command denied' (a fault) for a table the reader has no grant on, existing or not",
}


@pytest.fixture
def vendor(settings):
    """The vendor simulator, for the hypothesis judge's model: one that never flips (texts differ per dialect)."""
    perfect = SimModel(
        family="simulated", catch_probability=1.0, false_reject_probability=0.0, flip_probability=0.0, latency_ms=1
    )
    simulator = Simulator(models={"sim-perfect": perfect})
    server, url = start_in_thread(simulator)
    settings.VENDOR_SIMULATOR_URL = url
    yield simulator
    server.shutdown()
    server.server_close()


@pytest.fixture
def postgres_demo(settings, tmp_path):
    server = require_postgres_server()
    database, role = f"docket_mygold_{os.getpid()}", f"docket_mygold_reader_{os.getpid()}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(database)))
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(database)))
    admin = urlunsplit(urlsplit(server)._replace(path=f"/{database}"))
    build_demo_warehouse(admin)
    reader = create_reader_role(admin, role=role)
    yield warehouse_register(name="gold-pg", dialect="postgres", dsn=reader)
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(database)))
        conn.execute(pgsql.SQL("DROP ROLE IF EXISTS {}").format(pgsql.Identifier(role)))


def decisions(warehouse, texts: dict[str, str]) -> dict[str, tuple]:
    """Per item: (what running it decided, its rows or None, the verifier's outcome and class)."""
    catalogue = catalogue_refresh(warehouse=warehouse)
    decided = {}
    for item_id, text in texts.items():
        result = run_readonly(warehouse=warehouse, sql=text, row_cap=100_000, timeout_s=20)
        ran = execution_outcome(result)
        checked = verify(text, catalogue, warehouse=warehouse).outcome
        rows = comparable_rows(result.rows) if result.executed else None
        decided[item_id] = (ran.kind.value, ran.failure_class, rows, checked.kind.value, checked.failure_class)
    return decided


# The calibration runs take every fifth item and the one that differs (the whole set takes minutes per run).
CALIBRATION_ITEMS = [item for index, item in enumerate(ITEMS) if index % 5 == 0 or item["id"] == "demo-127"]


def calibration_decisions(tmp_path, warehouse_name: str, texts: dict[str, str], judges) -> dict[tuple, str]:
    """Import the texts as a gold set on the warehouse, run the judges inline: {(judge, item id): decision}."""
    path = tmp_path / f"{warehouse_name}.jsonl"
    rows = [
        {
            "id": item["id"],
            "question": item["question"],
            "sql": texts[item["id"]],
            "label": item["label"],
            "error_class": item["error_class"],
            "warehouse": warehouse_name,
        }
        for item in CALIBRATION_ITEMS
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    version = goldset_import(path_or_file=path, gold_set_name=f"gold-{warehouse_name}", fmt="jsonl")
    run = run_inline(gold_set_version=version, judge_versions=judges, repeats=1, label=warehouse_name)
    return {
        (v.judge_version.judge.name, v.query.external_id): v.decision
        for v in Verdict.objects.filter(run=run).select_related("judge_version__judge", "query")
    }


# Two engines, 223 items through run_sql and verify_sql each, then two calibration runs: 3 to 6
# minutes on a shared machine, so more than the suite's 600 s would be too tight.
@pytest.mark.timeout(1200)
def test_the_gold_set_transpiled_to_mysql_decides_as_on_postgres(postgres_demo, mariadb_demo, vendor, tmp_path):
    mysql = register_mysql_demo(mariadb_demo["reader"], name="gold-mysql")
    on_postgres = decisions(postgres_demo, {item["id"]: item["sql"] for item in ITEMS})
    transpiled = {item["id"]: sqlglot.transpile(item["sql"], read="postgres", write="mysql")[0] for item in ITEMS}
    on_mysql = decisions(mysql, transpiled)
    differing = {
        item_id: {
            "postgres": on_postgres[item_id][:2] + on_postgres[item_id][3:],
            "mysql": on_mysql[item_id][:2] + on_mysql[item_id][3:],
            "sql": transpiled[item_id],
        }
        for item_id in on_postgres
        if on_postgres[item_id] != on_mysql[item_id]
    }
    unexplained = {item_id: d for item_id, d in differing.items() if item_id not in KNOWN_DIFFERENCES}
    assert unexplained == {}, json.dumps(unexplained, indent=1, default=str)[:20000]
    assert set(differing) == set(KNOWN_DIFFERENCES)  # each listed difference is still one
    assert on_mysql["demo-127"][:2] == ("failed", "dialect")

    # A calibration run with the verifier and a hypothesis judge (simulated model) on both.
    judges = [
        judge_create(name="gold-verifier", backend="verifier").latest_version,
        judge_create(
            name="gold-hypothesis",
            backend="hypothesis_probe",
            family="simulated",
            model="sim-perfect",
            config={"simulated": True, "timeout_s": 5.0},
        ).latest_version,
    ]
    run_pg = calibration_decisions(tmp_path, "gold-pg", {item["id"]: item["sql"] for item in ITEMS}, judges)
    run_my = calibration_decisions(tmp_path, "gold-mysql", transpiled, judges)
    assert len(run_pg) == len(run_my) == 2 * len(CALIBRATION_ITEMS)
    verdicts_differing = {key: (run_pg[key], run_my.get(key)) for key in run_pg if run_pg[key] != run_my.get(key)}
    # The verifier's EXPLAIN on MySQL refuses demo-127 (error 1235, above): a reject there.
    assert verdicts_differing == {("gold-verifier", "demo-127"): ("accept", "reject")}
    assert {decision for (judge, _), decision in run_my.items() if judge == "gold-verifier"} >= {"accept", "reject"}
    # The decisions are not all alike: the gold set's wrong unknown_object items fail on both.
    assert {d[0] for d in on_mysql.values()} >= {"passed", "failed"}
