"""The verification ladder's rungs as judges, against the real probes app and a shop warehouse."""

import pytest
from django.core.exceptions import ValidationError

from judges.backends import get_backend
from judges.services import judge_create
from judges.tests.factories import simulated_version
from labelling.models import Query
from probes.catalogue import catalogue_refresh
from probes.tests import shop
from probes.warehouses import dsn_env_var, warehouse_register

pytestmark = pytest.mark.django_db

RIGHT = (
    "SELECT o.status, SUM(oi.quantity * oi.unit_price) AS revenue FROM order_items oi "
    "JOIN orders o ON o.order_id = oi.order_id WHERE o.status = 'paid' GROUP BY o.status"
)


@pytest.fixture
def shop_warehouse(settings, tmp_path, monkeypatch):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    monkeypatch.setenv(dsn_env_var("shop"), shop.create_sqlite(tmp_path / "shop.sqlite3"))
    warehouse = warehouse_register(name="shop", dialect="sqlite")
    catalogue_refresh(warehouse=warehouse)
    return warehouse


def rung_judge(rung):
    return get_backend(simulated_version(name=f"ladder-{rung}", backend="ladder", rung=rung))


def item(sql, warehouse, invariants=None):
    return Query.objects.create(
        question="Paid revenue by status?",
        sql=sql,
        warehouse=warehouse,
        external_id=f"q{Query.objects.count()}",
        invariants=invariants or {},
    )


def test_the_parse_rung_rejects_text_that_does_not_parse_and_a_write():
    judge = rung_judge("parse")
    broken = judge.judge(item("SELECT FROM WHERE", None))
    write = judge.judge(item("DELETE FROM orders", None))
    assert (broken.decision, broken.error_class) == ("reject", "syntax")
    # Read as the verifier reads it: a write is no dialect slip, it is not a query at all.
    assert (write.decision, write.error_class) == ("reject", "other")
    assert judge.judge(item(RIGHT, None)).decision == "accept"


def test_the_plan_rung_is_the_verifier_and_climbs_past_parse(shop_warehouse):
    result = rung_judge("plan").judge(item("SELECT SUM(oi.price) FROM order_items oi", shop_warehouse))
    assert (result.decision, result.error_class) == ("reject", "unknown_object")
    assert result.reason.startswith("plan:") and result.context["stopped_at"] == "plan"


def test_the_non_empty_rung_rejects_an_empty_result_the_run_rung_accepts(shop_warehouse):
    empty = item("SELECT order_id FROM orders WHERE status = 'refunded'", shop_warehouse)
    assert rung_judge("run").judge(empty).decision == "accept"
    result = rung_judge("non_empty").judge(empty)
    assert result.decision == "reject" and result.context["stopped_at"] == "non_empty"


def test_the_invariants_rung_rejects_a_result_that_breaks_the_items_invariants(shop_warehouse):
    invariants = {"columns": 2, "rows": {"max": 1}, "values_in": {"status": ["paid"]}}
    unfiltered = item(RIGHT.replace("WHERE o.status = 'paid' ", ""), shop_warehouse, invariants)
    right = item(RIGHT, shop_warehouse, invariants)
    judge = rung_judge("invariants")
    result = judge.judge(unfiltered)
    assert (result.decision, result.error_class) == ("reject", "join_fanout")
    assert "cancelled" in result.reason
    accepted = judge.judge(right)
    assert accepted.decision == "accept"
    assert accepted.context["invariants"] == invariants  # what was checked travels with the verdict


def test_an_item_without_invariants_passes_the_invariants_rung(shop_warehouse):
    assert rung_judge("invariants").judge(item(RIGHT, shop_warehouse)).decision == "accept"


def test_invalid_invariants_on_the_item_are_an_error_not_a_reject(shop_warehouse):
    result = rung_judge("invariants").judge(item(RIGHT, shop_warehouse, {"rows": {"min": "one"}}))
    assert result.decision == "error" and "rows.min" in result.reason


def test_a_warehouse_fault_is_an_error_verdict_never_a_reject(shop_warehouse, monkeypatch):
    query = item(RIGHT, shop_warehouse)
    monkeypatch.delenv(dsn_env_var("shop"))
    for rung in ("plan", "run", "invariants"):
        assert rung_judge(rung).judge(query).decision == "error"


def test_the_run_rung_without_a_warehouse_is_an_error():
    assert rung_judge("run").judge(item(RIGHT, None)).decision == "error"


def test_a_ladder_judge_must_name_a_known_rung():
    with pytest.raises(ValidationError) as caught:
        judge_create(name="ladder-x", backend="ladder", config={"rung": "vibes"})
    assert "rung" in str(caught.value)
    judge_create(name="ladder-ok", backend="ladder", config={"rung": "non_empty"})


def test_the_parse_rung_does_not_reject_a_text_dockets_own_size_limits_refused(settings):
    settings.WAREHOUSE_MAX_SQL_BYTES = 40
    result = rung_judge("parse").judge(item(RIGHT, None))
    assert result.decision == "error", "the text was never read: nothing is known about the SQL"
    assert "WAREHOUSE_MAX_SQL_BYTES" in result.reason and result.context["stopped_at"] == "parse"


def test_the_plan_rung_rejects_on_a_cost_rule_so_the_ladder_keeps_the_item(shop_warehouse):
    result = rung_judge("plan").judge(item("SELECT * FROM orders, customers LIMIT 3", shop_warehouse))
    assert (result.decision, result.error_class) == ("reject", "other")
    assert result.context["failure_class"] == "timeout" and result.context["stopped_at"] == "plan"


def test_the_run_rung_on_a_file_that_is_not_a_database_is_an_error(shop_warehouse, tmp_path):
    query = item(RIGHT, shop_warehouse)
    (tmp_path / "shop.sqlite3").write_bytes(b"not a database" * 500)
    judge = get_backend(
        simulated_version(name="ladder-run-no-explain", backend="ladder", rung="run", rules={"explain": False})
    )
    result = judge.judge(query)
    assert (result.decision, result.context["stopped_at"]) == ("error", "run")
    assert result.context["fault"] == "database_error"
    assert result.reason == "run: the warehouse could not run it: file is not a database"
