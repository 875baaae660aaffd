"""The preview panel over the one result preview (probes/preview.py, on probes.execution.run_readonly).

Most tests put a stand-in with run_readonly's signature (run against an in-memory SQLite
database) in its place under the result preview, to exercise the panel's own logic:
comparison, refusal and error display.
"""

import sqlite3
import time
from dataclasses import dataclass

import pytest
from django.urls import reverse

from labelling.preview import query_preview
from labelling.tests import factories
from probes import preview as result_preview_module
from probes.catalogue import catalogue_refresh
from probes.models import Warehouse
from probes.warehouses import dsn_env_var, warehouse_register

pytestmark = pytest.mark.django_db


@dataclass
class ExecutionResult:
    allowed: bool
    reason: str
    executed: bool
    columns: list
    rows: list
    elapsed_ms: float
    error: str
    truncated: bool = False


def stand_in_run_readonly(*, warehouse, sql, row_cap=None, timeout_s=None):
    if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
        return ExecutionResult(False, "only SELECT", False, [], [], 0.0, "")
    db = sqlite3.connect(":memory:")
    db.executescript("CREATE TABLE t (region TEXT, total REAL); INSERT INTO t VALUES ('North', 10.001), ('south', 5);")
    started = time.perf_counter()
    try:
        cursor = db.execute(sql)
    except sqlite3.Error as exc:
        return ExecutionResult(True, "", False, [], [], 0.0, str(exc))
    rows = cursor.fetchmany(row_cap) if row_cap else cursor.fetchall()
    columns = [d[0] for d in cursor.description]
    return ExecutionResult(True, "", True, columns, rows, (time.perf_counter() - started) * 1000, "")


@pytest.fixture
def probes_execution(monkeypatch):
    monkeypatch.setattr(result_preview_module, "run_readonly", stand_in_run_readonly)


def test_the_suggestion_reports_a_match_regardless_of_order_and_case(probes_execution):
    warehouse = Warehouse.objects.create(name="w", dialect="sqlite")
    query = factories.query(
        warehouse=warehouse,
        sql="SELECT UPPER(region), total FROM t ORDER BY total",
        reference_sql="SELECT region, ROUND(total, 2) FROM t ORDER BY region",
    )
    preview = query_preview(query=query)
    assert preview.available and preview.result.ok and preview.result.columns == ["UPPER(region)", "total"]
    assert preview.comparison.match


def test_the_suggestion_shows_where_results_differ(probes_execution):
    warehouse = Warehouse.objects.create(name="w", dialect="sqlite")
    query = factories.query(
        warehouse=warehouse, sql="SELECT region FROM t", reference_sql="SELECT region FROM t WHERE total > 6"
    )
    comparison = query_preview(query=query).comparison
    assert not comparison.match and comparison.row_count_a == 2 and comparison.row_count_b == 1
    assert comparison.only_in_a == [("south",)]


def test_a_refused_or_failing_query_is_shown_not_compared(probes_execution):
    warehouse = Warehouse.objects.create(name="w", dialect="sqlite")
    query = factories.query(warehouse=warehouse, sql="DELETE FROM t", reference_sql="SELECT nope FROM t")
    preview = query_preview(query=query)
    assert not preview.result.ok and "Refused" in preview.result.message
    assert not preview.reference.ok and "no such column" in preview.reference.message
    assert preview.comparison is None


def test_without_reference_sql_only_the_first_rows_are_fetched(probes_execution):
    warehouse = Warehouse.objects.create(name="w", dialect="sqlite")
    query = factories.query(
        warehouse=warehouse,
        sql="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 100) SELECT i FROM n",
    )
    preview = query_preview(query=query)
    assert len(preview.result.rows) == 20 and preview.result.truncated
    assert preview.reference is None and preview.comparison is None


@pytest.fixture
def real_warehouse(db, tmp_path, monkeypatch, settings):
    """A SQLite warehouse registered through probes, with its catalogue introspected."""

    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    path = tmp_path / "sales.sqlite3"
    db_file = sqlite3.connect(path)
    db_file.executescript(
        "CREATE TABLE sales (region TEXT NOT NULL, amount REAL, status TEXT);"
        "INSERT INTO sales VALUES ('North', 10.0, 'done'), ('North', 5.0, 'cancelled'), ('South', 7.5, 'done');"
    )
    db_file.commit()
    db_file.close()
    monkeypatch.setenv(dsn_env_var("sales"), f"sqlite:///{path}")
    warehouse = warehouse_register(name="sales", dialect="sqlite")
    catalogue_refresh(warehouse=warehouse)
    return warehouse


def test_with_the_real_read_only_path_a_missing_filter_is_suggested(real_warehouse, client, role_users):
    """probes.execution.run_readonly is wired in: the panel shows rows and the rung-6 difference."""

    gold_set = factories.gold_set(name="sales-gold")
    query = factories.query(
        gold_set=gold_set,
        warehouse=real_warehouse,
        question="Revenue per region, completed sales only",
        sql="SELECT region, SUM(amount) FROM sales GROUP BY region",
        reference_sql="SELECT region, SUM(amount) FROM sales WHERE status = 'done' GROUP BY region",
    )
    preview = query_preview(query=query)
    assert preview.result.ok and sorted(preview.result.rows) == [("North", 15.0), ("South", 7.5)]
    assert not preview.comparison.match and preview.comparison.only_in_b == [("north", 10.0)]
    client.force_login(role_users["labeller"])
    html = client.get(reverse("labelling:preview", args=[query.pk])).content.decode()
    assert "Same row count (2) but different values." in html and "a suggestion, not a label" in html
    page = client.get(reverse("labelling:queue_item", args=["sales-gold", query.pk])).content.decode()
    assert "amount" in page and "nullable" in page  # the catalogue's columns for `sales`
    refused = factories.query(gold_set=gold_set, warehouse=real_warehouse, sql="DELETE FROM sales")
    assert (
        "Refused by the read-only guard" in client.get(reverse("labelling:preview", args=[refused.pk])).content.decode()
    )


def test_the_preview_stops_at_the_warehouse_statement_timeout_the_settings_give(real_warehouse, settings):
    """The preview has no timeout of its own: WAREHOUSE_STATEMENT_TIMEOUT_S bounds it (it held a fixed 5 s)."""
    settings.WAREHOUSE_STATEMENT_TIMEOUT_S = 0.3
    # A 3 rows ^ 24 cross join: allowed by the guard, far past any timeout (the corpus's time bomb).
    tables = ", ".join(f"sales s{n}" for n in range(24))
    query = factories.query(warehouse=real_warehouse, sql=f"SELECT count(*) FROM {tables}")
    preview = query_preview(query=query)
    assert not preview.result.ok
    assert preview.result.message == "Did not run: timeout: statement exceeded 0.3s", preview.result.message
