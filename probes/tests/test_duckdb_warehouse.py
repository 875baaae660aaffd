"""Issue 34: DuckDB warehouses, opened read-only with no external access and a locked configuration.

The demo built by `load_demo_warehouse --duckdb PATH`; the catalogue; the verifier and the
fan-out probe; the hostile family (0 harmful: the file's checksum, no file written, the
configuration as set); and the demo gold set transpiled to DuckDB deciding as on SQLite.
"""

import hashlib
import io
import json
from pathlib import Path

import pytest
import sqlglot
from django.core.management import call_command

from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, comparable_rows
from probes.execution import execute_on_dsn, run_readonly
from probes.fanout import fanout_probe
from probes.models import Warehouse
from probes.outcome import OutcomeKind, execution_outcome
from probes.tests.hostile import duckdb as family
from probes.tests.hostile.run_family import family_problems
from probes.verifier import verify
from probes.warehouses import warehouse_dsn, warehouse_register

# What is tested is the DuckDB warehouse; the app database only holds its records, so CI runs
# these once, in the SQLite pass (conftest.py `ci_share_keeps`).
pytestmark = [pytest.mark.django_db, pytest.mark.any_app_database]
GOLD_FILE = Path(__file__).resolve().parents[2] / "labelling" / "data" / "demo_gold.jsonl"


@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory):
    return tmp_path_factory.mktemp("duck") / "demo.duckdb"


@pytest.fixture
def demo(duckdb_file):
    if not duckdb_file.exists():
        out = io.StringIO()
        call_command("load_demo_warehouse", "--duckdb", str(duckdb_file), stdout=out)
        assert "orders 3000" in out.getvalue() and "registered as `demo`" in out.getvalue()
    else:
        warehouse_register(name="demo", dialect="duckdb", dsn=f"duckdb:///{duckdb_file}")
    warehouse = Warehouse.objects.get(name="demo")
    catalogue_refresh(warehouse=warehouse)
    return warehouse


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_demo_as_duckdb_has_a_catalogue_and_answers(demo):
    snapshot = demo.catalogues.get().snapshot
    assert snapshot["dialect"] == "duckdb" and snapshot["tables"]["orders"]["primary_key"] == ["order_id"]
    assert {"columns": ["customer_id"], "ref_table": "customers", "ref_columns": ["customer_id"]} in snapshot["tables"][
        "orders"
    ]["foreign_keys"]
    assert snapshot["samples"]["orders"]["status"] == ["cancelled", "completed", "pending", "refunded"]
    result = run_readonly(warehouse=demo, sql="SELECT COUNT(*) FROM orders")
    assert result.rows == [[3000]]
    capped = run_readonly(warehouse=demo, sql="SELECT * FROM order_items", row_cap=5)
    assert len(capped.rows) == 5 and capped.truncated_by == "row_cap"


def test_the_engine_refuses_what_the_guard_would_even_without_it(demo):
    dsn = warehouse_dsn(demo)
    for sql in ("DELETE FROM orders", "SELECT * FROM read_csv('/etc/passwd')", "SET enable_external_access = true"):
        result = execute_on_dsn(dialect="duckdb", dsn=dsn, sql=sql, row_cap=1, timeout_s=5)
        assert not result.executed and result.error_code == "refused_by_database", (sql, result.error)


def test_the_verifier_and_the_fanout_probe_on_duckdb(demo):
    catalogue = demo.catalogues.get()
    wrong = verify("SELECT o.order_id, o.shipped_at FROM orders o LIMIT 5", catalogue, warehouse=demo)
    assert wrong.outcome.failure_class == "unknown_object"
    assert verify("SELECT status, COUNT(*) FROM orders GROUP BY status", catalogue, warehouse=demo).outcome.kind is (
        OutcomeKind.PASSED
    )
    run = fanout_probe(
        sql="SELECT o.order_id, SUM(o.order_total) FROM orders o JOIN payments p ON p.order_id = o.order_id "
        "GROUP BY o.order_id",
        warehouse=demo,
    )
    assert run.outcome == "confirmed", run.message


def test_the_duckdb_family_holds(demo, duckdb_file, tmp_path):
    outfile = tmp_path / "stolen.csv"
    before = digest(duckdb_file)
    problems = family_problems(demo, family, outfile)
    assert problems == []
    assert digest(duckdb_file) == before and not outfile.exists()
    limits = execute_on_dsn(
        dialect="duckdb",
        dsn=warehouse_dsn(demo),
        sql="SELECT current_setting('enable_external_access'), current_setting('threads')",
        row_cap=1,
        timeout_s=5,
    )
    assert limits.rows == [[False, 1]]


def test_the_gold_set_transpiled_to_duckdb_decides_as_on_sqlite(demo, tmp_path, settings):
    items = [json.loads(line) for line in GOLD_FILE.read_text().splitlines() if line.strip()]
    path = tmp_path / "demo.sqlite3"
    build_demo_warehouse(path)
    lite = warehouse_register(name="gold-sqlite", dialect="sqlite", dsn=f"sqlite:///{path}")
    catalogues = {"sqlite": catalogue_refresh(warehouse=lite), "duckdb": demo.catalogues.get()}

    def decide(warehouse, dialect, text):
        result = run_readonly(warehouse=warehouse, sql=text, row_cap=100_000, timeout_s=20)
        ran = execution_outcome(result)
        checked = verify(text, catalogues[dialect], warehouse=warehouse).outcome
        rows = comparable_rows(result.rows) if result.executed else None
        return ran.kind.value, ran.failure_class, rows, checked.kind.value, checked.failure_class

    differing = {}
    for item in items:
        on_sqlite = decide(lite, "sqlite", item["sql"])
        text = sqlglot.transpile(item["sql"], read="postgres", write="duckdb")[0]
        on_duckdb = decide(demo, "duckdb", text)
        if on_sqlite != on_duckdb:
            differing[item["id"]] = {"sqlite": on_sqlite[:2] + on_sqlite[3:], "duckdb": on_duckdb[:2] + on_duckdb[3:]}
    assert differing == {}, json.dumps(differing, indent=1)[:5000]
