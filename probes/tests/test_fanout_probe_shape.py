"""Probes Docket writes itself: the model names the suspicion, the subject SQL's own tree is counted.

A probe text handed in (a model's `probe_sql`) runs only if it is `COUNT(*)` against
`COUNT(DISTINCT <a key>)` over one of the subject's own FROM/JOIN/WHERE; anything else is
refused and recorded as refused, and a refused probe never confirms.
"""

import pytest

from probes.fanout import check_fanout
from probes.hypotheses import JoinFanoutHypothesis
from probes.models import ProbeOutcome, ProbeRun
from probes.outcome import OutcomeKind

# Revenue per customer summing order totals across an items join: orders 10 is repeated.
SUBJECT = (
    "SELECT c.name, SUM(o.total) FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
    "JOIN order_items oi ON oi.order_id = o.order_id WHERE o.status = 'paid' GROUP BY c.name"
)
BODY = (
    "FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
    "JOIN order_items oi ON oi.order_id = o.order_id WHERE o.status = 'paid'"
)
DOCKET_PROBE = (
    "SELECT COUNT(*) AS total_rows, COUNT(DISTINCT o.order_id) AS distinct_keys FROM customers AS c "
    "JOIN orders AS o ON o.customer_id = c.customer_id JOIN order_items AS oi ON oi.order_id = o.order_id "
    "WHERE o.status = 'paid'"
)


def probe(warehouse, probe_sql=None, *, join_table="order_items", grain_key="orders.order_id", subject=SUBJECT):
    hypothesis = JoinFanoutHypothesis(suspected=True, join_table=join_table, grain_key=grain_key, probe_sql=probe_sql)
    return check_fanout(hypothesis=hypothesis, warehouse=warehouse, subject_sql=subject)


def test_docket_writes_the_probe_from_the_subjects_own_from_join_tree(shop_sqlite):
    run = probe(shop_sqlite)
    assert run.probe_sql == DOCKET_PROBE
    assert run.hypothesis["probe_written_by"] == "docket"
    assert run.outcome == ProbeOutcome.CONFIRMED
    assert run.figures == {"total_rows": 4, "distinct_keys": 3}  # paid orders 10 (two items), 12, 13
    assert run.check_outcome.kind is OutcomeKind.FAILED and run.check_outcome.failure_class == "join_fanout"


@pytest.mark.parametrize("grain_key", ["o.order_id", "orders.(order_id)", "public.orders.order_id"])
def test_the_grain_key_may_be_named_by_alias_or_table(shop_sqlite, grain_key):
    assert probe(shop_sqlite, grain_key=grain_key).probe_sql == DOCKET_PROBE


def test_an_unqualified_grain_key_is_taken_only_when_one_table_has_it(shop_sqlite):
    ambiguous = probe(shop_sqlite, grain_key="order_id")
    assert ambiguous.outcome == ProbeOutcome.REFUSED
    assert ambiguous.message == "probe refused: order_id could be any of o, oi in the subject's FROM/JOIN"
    assert probe(shop_sqlite, grain_key="item_id").probe_sql.startswith(
        "SELECT COUNT(*) AS total_rows, COUNT(DISTINCT oi.item_id) AS distinct_keys"
    )


def test_select_2_1_never_confirms(shop_sqlite):
    run = probe(shop_sqlite, "SELECT 2, 1")
    assert run.outcome == ProbeOutcome.REFUSED and not run.rejects
    assert run.check_outcome.kind is OutcomeKind.FAULT
    assert run.probe_sql == "SELECT 2, 1" and run.hypothesis["probe_written_by"] == "given"
    assert run.message == "probe refused: not a fan-out probe: a probe reads the subject's FROM"
    assert ProbeRun.objects.get(pk=run.pk).outcome == ProbeOutcome.REFUSED


@pytest.mark.parametrize(
    ("probe_sql", "why"),
    [
        ("SELECT 2 AS total_rows, 1 AS distinct_keys " + BODY, "its first column must be COUNT(*)"),
        ("SELECT COUNT(*) + 1, COUNT(DISTINCT o.order_id) " + BODY, "its first column must be COUNT(*)"),
        ("SELECT COUNT(*), COUNT(o.order_id) " + BODY, "its second column must be COUNT(DISTINCT key)"),
        ("SELECT COUNT(*), COUNT(DISTINCT o.order_id), 1 " + BODY, "not 3 columns"),
        ("SELECT COUNT(*), COUNT(DISTINCT o.order_id) " + BODY + " GROUP BY c.name", "no GROUP clause"),
        ("SELECT COUNT(*), COUNT(DISTINCT o.order_id) " + BODY + " LIMIT 1", "no LIMIT clause"),
        # Not a key: far fewer statuses than rows on any table.
        ("SELECT COUNT(*), COUNT(DISTINCT o.status) " + BODY, "status is not a unique key of orders"),
        ("SELECT COUNT(*), COUNT(DISTINCT o.order_id + 0) " + BODY, "nothing computed"),
        # Another join or filter than the subject's counts rows the subject never reads.
        ("SELECT COUNT(*), COUNT(DISTINCT o.order_id) " + BODY.replace(" WHERE o.status = 'paid'", ""), "FROM/JOIN"),
        ("SELECT COUNT(*), COUNT(DISTINCT o.order_id) " + BODY + " AND oi.quantity > 1", "FROM/JOIN/WHERE"),
        (
            "SELECT COUNT(*), COUNT(DISTINCT o.order_id) "
            + BODY.replace(" WHERE", " JOIN order_items oi2 ON oi2.order_id = o.order_id WHERE"),
            "FROM/JOIN/WHERE",
        ),
        ("SELECT COUNT(*), COUNT(DISTINCT o.order_id) FROM orders o JOIN order_items oi USING (order_id)", "FROM"),
    ],
)
def test_a_given_probe_of_another_shape_is_refused(shop_sqlite, probe_sql, why):
    run = probe(shop_sqlite, probe_sql)
    assert run.outcome == ProbeOutcome.REFUSED and not run.rejects
    assert why in run.message
    assert run.guard_allowed, "the guard let it through; the shape check refused it"


def test_a_given_probe_of_exactly_that_shape_runs_as_read(shop_sqlite):
    given = "select count(*) as n, count(distinct o.order_id) as k /* the model's */ " + BODY
    run = probe(shop_sqlite, given)
    assert run.outcome == ProbeOutcome.CONFIRMED
    assert run.hypothesis["probe_written_by"] == "given"
    assert "the model's" not in run.probe_sql, "what runs is the text as checked, comments dropped"


def test_a_given_probe_may_count_another_tables_key(shop_sqlite):
    # The items are not repeated: one row per item in this join.
    run = probe(shop_sqlite, "SELECT COUNT(*), COUNT(DISTINCT oi.item_id) " + BODY)
    assert run.outcome == ProbeOutcome.REFUTED and run.check_outcome.kind is OutcomeKind.PASSED


def test_a_grain_on_the_outer_side_of_a_left_join_is_refused(shop_sqlite):
    subject = "SELECT c.name, SUM(o.total) FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id "
    subject += "LEFT JOIN order_items oi ON oi.order_id = o.order_id GROUP BY c.name"
    run = probe(shop_sqlite, subject=subject)
    assert run.outcome == ProbeOutcome.REFUSED
    assert "orders is on the outer side of an outer join" in run.message


def test_a_grain_key_that_is_not_a_key_is_refused(shop_sqlite):
    run = probe(shop_sqlite, grain_key="o.status")
    assert run.outcome == ProbeOutcome.REFUSED
    assert run.message.startswith("probe refused: o.status is not a unique key of orders (its keys: order_id)")


def test_a_join_table_the_subject_does_not_join_is_refused(shop_sqlite):
    run = probe(shop_sqlite, join_table="shipments")
    assert run.outcome == ProbeOutcome.REFUSED
    assert run.message == "probe refused: the subject SQL joins no table 'shipments'"


def test_a_given_probe_without_a_subject_is_refused(shop_sqlite):
    run = probe(shop_sqlite, "SELECT COUNT(*), COUNT(DISTINCT o.order_id) " + BODY, subject=None)
    assert run.outcome == ProbeOutcome.REFUSED
    assert run.message == "probe refused: there is no subject SQL to build or check the probe against"


def test_the_guard_still_refuses_first(shop_sqlite):
    run = probe(shop_sqlite, "DELETE FROM orders")
    assert run.outcome == ProbeOutcome.REFUSED and not run.guard_allowed
    assert run.guard_reason == "only a query may run; this is DELETE"


def test_a_subject_reading_a_cte_gets_the_with_clause_in_its_probe(shop_sqlite):
    subject = (
        "WITH paid AS (SELECT * FROM orders WHERE status = 'paid') "
        "SELECT SUM(p.total) FROM paid p JOIN order_items oi ON oi.order_id = p.order_id"
    )
    given = "SELECT COUNT(*), COUNT(DISTINCT oi.item_id) FROM paid p JOIN order_items oi ON oi.order_id = p.order_id"
    run = probe(shop_sqlite, given, subject=subject)
    assert run.outcome == ProbeOutcome.REFUSED
    assert "without the subject's WITH clause" in run.message
    run = probe(shop_sqlite, "WITH paid AS (SELECT * FROM orders WHERE status = 'paid') " + given, subject=subject)
    assert run.outcome == ProbeOutcome.REFUTED and run.figures == {"total_rows": 4, "distinct_keys": 4}


def test_a_composite_key_probe_on_postgres_is_accepted(shop_postgres):
    given = "SELECT COUNT(*), COUNT(DISTINCT (o.order_id, o.customer_id)) " + BODY
    run = probe(shop_postgres, given)
    assert run.outcome == ProbeOutcome.CONFIRMED and run.figures == {"total_rows": 4, "distinct_keys": 3}
