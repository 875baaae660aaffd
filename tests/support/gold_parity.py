"""Shared pieces of the issue-34 parity tests: the demo gold set decided on PostgreSQL and on another dialect.

The gold set's items, the demo built on PostgreSQL read by its reader role, the vendor
simulator for the hypothesis judge, each item's decisions through `run_readonly` and
`verify`, and a calibration run with the verifier and a hypothesis judge.
"""

import json
import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql as pgsql

from judges.demo import run_inline
from judges.models import Verdict
from judges.services import judge_create
from labelling.goldset_io import goldset_import
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, comparable_rows, create_reader_role
from probes.execution import run_readonly
from probes.outcome import execution_outcome
from probes.verifier import verify
from probes.warehouses import warehouse_register
from simulator import SimModel, Simulator, start_in_thread
from tests.support.services import require_postgres_server

GOLD_FILE = Path(__file__).resolve().parents[2] / "labelling" / "data" / "demo_gold.jsonl"
ITEMS = [json.loads(line) for line in GOLD_FILE.read_text().splitlines() if line.strip()]


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
    """The demo warehouse built in a scratch PostgreSQL database, registered as `gold-pg` with its reader role."""
    server = require_postgres_server()
    database, role = f"docket_gold_{os.getpid()}", f"docket_gold_reader_{os.getpid()}"
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


def differing_decisions(on_postgres: dict, other: dict, dialect: str, texts: dict[str, str]) -> dict[str, dict]:
    """The items whose decisions differ, with both sides (rows left out) and the transpiled text."""
    return {
        item_id: {
            "postgres": on_postgres[item_id][:2] + on_postgres[item_id][3:],
            dialect: other[item_id][:2] + other[item_id][3:],
            "sql": texts[item_id],
        }
        for item_id in on_postgres
        if on_postgres[item_id] != other[item_id]
    }


def calibration_items(also: set[str]) -> list[dict]:
    """Every fifth item and those in `also` (the whole set takes minutes per run)."""
    return [item for index, item in enumerate(ITEMS) if index % 5 == 0 or item["id"] in also]


def gold_judges() -> list:
    """The verifier and a hypothesis-probe judge on the simulated model `sim-perfect`."""
    return [
        judge_create(name="gold-verifier", backend="verifier").latest_version,
        judge_create(
            name="gold-hypothesis",
            backend="hypothesis_probe",
            family="simulated",
            model="sim-perfect",
            config={"simulated": True, "timeout_s": 5.0},
        ).latest_version,
    ]


def calibration_decisions(tmp_path, warehouse_name: str, texts: dict[str, str], judges, items) -> dict[tuple, str]:
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
        for item in items
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    version = goldset_import(path_or_file=path, gold_set_name=f"gold-{warehouse_name}", fmt="jsonl")
    run = run_inline(gold_set_version=version, judge_versions=judges, repeats=1, label=warehouse_name)
    return {
        (v.judge_version.judge.name, v.query.external_id): v.decision
        for v in Verdict.objects.filter(run=run).select_related("judge_version__judge", "query")
    }
