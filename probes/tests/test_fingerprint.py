import pytest

from probes.fingerprint import canonical_sql, sql_fingerprint

SAME = [
    (
        "select o.order_id, sum(oi.quantity) from orders o join order_items oi on o.order_id = oi.order_id group by 1",
        """SELECT O.ORDER_ID , SUM(OI.QUANTITY)
           FROM Orders AS o  -- the orders
           JOIN order_items AS oi ON o.order_id=oi.order_id
           GROUP BY 1""",
    ),
    (
        "SELECT a.x FROM t a",
        "select b.x from t as b",
    ),
]
DIFFERENT = [
    ("SELECT x FROM t WHERE y = 1", "SELECT x FROM t WHERE y = 2"),
    ("SELECT x FROM t", "SELECT x FROM u"),
    ("SELECT 'Abc' FROM t", "SELECT 'abc' FROM t"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_formatting_does_not_change_the_fingerprint(a, b):
    assert sql_fingerprint(a) == sql_fingerprint(b)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_meaning_changes_the_fingerprint(a, b):
    assert sql_fingerprint(a) != sql_fingerprint(b)


def test_unparseable_text_still_gets_a_stable_fingerprint():
    assert sql_fingerprint("SELEC broken (") == sql_fingerprint("selec   BROKEN (")
    assert len(sql_fingerprint("SELEC broken (")) == 64


def test_canonical_form_is_readable_sql():
    assert canonical_sql("select x.A from T x") == "SELECT t1.a FROM t AS t1"
