"""Deterministic fan-out detection, its probe, and fail-open probe runs."""

import pytest
from django.db import IntegrityError
from pydantic import ValidationError

from probes.fanout import check_fanout, detect_fanout, fanout_probe
from probes.hypotheses import JoinFanoutHypothesis
from probes.models import ProbeOutcome, ProbeRun
from probes.outcome import OutcomeKind
from probes.selectors import catalogue_get_latest

# Revenue per customer summing order totals across an items join: orders are repeated.
ORDER_TOTALS_ACROSS_ITEMS = (
    "SELECT c.name, SUM(o.total) FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
    "JOIN order_items oi ON oi.order_id = o.order_id GROUP BY c.name"
)
# Item revenue across a shipments join: order 10 shipped twice, so its items count twice.
ITEM_REVENUE_ACROSS_SHIPMENTS = (
    "SELECT SUM(oi.quantity * oi.unit_price) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id "
    "JOIN shipments s ON s.order_id = o.order_id"
)
CORRECT = [
    # Many-to-one joins never repeat the measured rows.
    "SELECT SUM(oi.quantity * oi.unit_price) FROM order_items oi JOIN orders o ON oi.order_id = o.order_id",
    "SELECT c.name, COUNT(o.order_id) FROM customers c JOIN orders o USING (customer_id) GROUP BY 1",
    # Pre-aggregating the many side to the join key is the fix, and is recognised as unique.
    "WITH s AS (SELECT order_id, COUNT(*) AS n FROM shipments GROUP BY order_id) "
    "SELECT SUM(o.total) FROM orders o JOIN s ON s.order_id = o.order_id",
    # COUNT(DISTINCT ...) and MAX are immune to repeated rows.
    "SELECT COUNT(DISTINCT o.order_id) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id",
    "SELECT MAX(o.total) FROM orders o JOIN order_items oi ON oi.order_id = o.order_id",
    # No aggregate: a listing of items with their order is intended one-to-many.
    "SELECT o.order_id, oi.product FROM orders o JOIN order_items oi ON oi.order_id = o.order_id",
]


def test_detects_order_totals_summed_across_items(shop_sqlite):
    hypothesis = detect_fanout(ORDER_TOTALS_ACROSS_ITEMS, catalogue_get_latest(warehouse_id=shop_sqlite.pk))
    assert hypothesis.suspected
    assert hypothesis.join_table == "order_items"
    assert hypothesis.grain_key == "orders.order_id"
    assert hypothesis.probe_sql == (
        "SELECT COUNT(*) AS total_rows, COUNT(DISTINCT o.order_id) AS distinct_keys FROM customers AS c "
        "JOIN orders AS o ON o.customer_id = c.customer_id JOIN order_items AS oi ON oi.order_id = o.order_id"
    )


@pytest.mark.parametrize("sql", CORRECT)
def test_does_not_suspect_correct_queries(shop_sqlite, sql):
    assert detect_fanout(sql, catalogue_get_latest(warehouse_id=shop_sqlite.pk)) == JoinFanoutHypothesis(
        suspected=False
    )


def test_a_suspected_fanout_is_confirmed_with_the_counts(shop_sqlite):
    hypothesis = detect_fanout(ORDER_TOTALS_ACROSS_ITEMS, catalogue_get_latest(warehouse_id=shop_sqlite.pk))
    run = check_fanout(
        hypothesis=hypothesis,
        warehouse=shop_sqlite,
        subject_sql=ORDER_TOTALS_ACROSS_ITEMS,
        subject_fingerprint="f" * 64,
    )
    assert run.outcome == ProbeOutcome.CONFIRMED and run.rejects
    assert run.message == "order_items fans out orders.order_id: 5 rows for 4 distinct keys"
    assert run.figures == {"total_rows": 5, "distinct_keys": 4}
    assert run.guard_allowed and run.catalogue_version == 1
    assert ProbeRun.objects.get(pk=run.pk).hypothesis["join_table"] == "order_items"


def test_a_second_hop_fanout_is_found_from_the_measure_table(shop_sqlite):
    run = fanout_probe(sql=ITEM_REVENUE_ACROSS_SHIPMENTS, warehouse=shop_sqlite)
    assert run.message == "shipments fans out order_items.item_id: 6 rows for 4 distinct keys"


def test_a_filter_that_removes_the_duplicates_refutes_the_suspicion(shop_sqlite):
    sql = ITEM_REVENUE_ACROSS_SHIPMENTS + " WHERE o.order_id = 12"
    run = fanout_probe(sql=sql, warehouse=shop_sqlite)
    assert run.outcome == ProbeOutcome.REFUTED and not run.rejects
    assert run.message == "no fan-out: 1 rows for 1 distinct keys"


def test_not_suspected_is_recorded_without_probing(shop_sqlite):
    run = check_fanout(hypothesis=JoinFanoutHypothesis(suspected=False), warehouse=shop_sqlite)
    assert run.outcome == ProbeOutcome.REFUTED and run.probe_sql == "" and not run.rejects


def test_a_probe_the_guard_refuses_fails_open(shop_sqlite):
    hypothesis = JoinFanoutHypothesis(
        suspected=True, join_table="order_items", grain_key="orders.order_id", probe_sql="DELETE FROM orders"
    )
    run = check_fanout(hypothesis=hypothesis, warehouse=shop_sqlite)
    assert run.outcome == ProbeOutcome.REFUSED and not run.rejects
    assert run.guard_reason == "only a query may run; this is DELETE"


def test_a_probe_that_errors_fails_open(shop_sqlite):
    hypothesis = JoinFanoutHypothesis(suspected=True, join_table="order_items", grain_key="orders.order_id")
    shop_sqlite.path.unlink()  # the warehouse is gone: Docket's own probe cannot run
    run = check_fanout(hypothesis=hypothesis, warehouse=shop_sqlite, subject_sql=ORDER_TOTALS_ACROSS_ITEMS)
    assert run.outcome == ProbeOutcome.ERROR and not run.rejects
    assert run.message == "probe failed: transport: the sqlite warehouse file does not exist"
    assert run.check_outcome.kind is OutcomeKind.FAULT


def test_a_probe_of_the_wrong_shape_is_refused_and_fails_open(shop_sqlite):
    hypothesis = JoinFanoutHypothesis(suspected=True, join_table="x", grain_key="y", probe_sql="SELECT 'many'")
    run = check_fanout(hypothesis=hypothesis, warehouse=shop_sqlite, subject_sql=ORDER_TOTALS_ACROSS_ITEMS)
    assert run.outcome == ProbeOutcome.REFUSED and not run.rejects
    assert run.message == "probe refused: not a fan-out probe: a probe reads the subject's FROM"


def test_the_hypothesis_schema_rejects_unknown_fields():
    with pytest.raises(ValidationError):
        JoinFanoutHypothesis(suspected=True, join_table="t", grain_key="k", probe_sql="SELECT 1", verdict="reject")


def test_fanout_on_postgres_is_confirmed(shop_postgres):
    run = fanout_probe(sql=ITEM_REVENUE_ACROSS_SHIPMENTS, warehouse=shop_postgres)
    assert run.outcome == ProbeOutcome.CONFIRMED
    assert run.message == "shipments fans out order_items.item_id: 6 rows for 4 distinct keys"


def test_a_refused_probe_cannot_be_stored_with_another_outcome(shop_sqlite):
    with pytest.raises(IntegrityError, match="probes_proberun_refused_when_guard_refuses|CHECK"):
        ProbeRun.objects.create(warehouse=shop_sqlite, guard_allowed=False, outcome=ProbeOutcome.CONFIRMED)


def test_an_unknown_outcome_cannot_be_stored(shop_sqlite):
    with pytest.raises(IntegrityError, match="probes_proberun_outcome_valid|CHECK"):
        ProbeRun.objects.create(warehouse=shop_sqlite, guard_allowed=True, outcome="maybe")
