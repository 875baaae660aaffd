"""The verifier and hypothesis-and-probe judges against the real probes app and a shop warehouse."""

import pytest

from judges.backends import get_backend
from judges.tests.factories import simulated_version
from labelling.models import Query
from probes.catalogue import catalogue_refresh
from probes.models import ProbeRun
from probes.tests import shop
from probes.warehouses import dsn_env_var, warehouse_register

pytestmark = pytest.mark.django_db

FANOUT_SQL = (
    "SELECT SUM(oi.quantity * oi.unit_price) AS revenue FROM order_items oi "
    "JOIN shipments s ON s.order_id = oi.order_id -- sim: wrong join_fanout table=shipments grain=oi.item_id"
)
PLAIN_SQL = "SELECT SUM(oi.quantity * oi.unit_price) AS revenue FROM order_items oi -- sim: correct"


@pytest.fixture
def shop_warehouse(settings, tmp_path, monkeypatch):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    monkeypatch.setenv(dsn_env_var("shop"), shop.create_sqlite(tmp_path / "shop.sqlite3"))
    warehouse = warehouse_register(name="shop", dialect="sqlite")
    catalogue_refresh(warehouse=warehouse)
    return warehouse


def live_query(sql, warehouse, external_id):
    return Query.objects.create(
        question="Revenue?", sql=sql, warehouse=warehouse, source="live", external_id=external_id
    )


def test_the_verifier_judge_rejects_an_unknown_column_and_records_its_versions(shop_warehouse):
    judge = get_backend(simulated_version(backend="verifier"))
    wrong = judge.judge(live_query("SELECT SUM(oi.price) FROM order_items oi", shop_warehouse, "v1"))
    right = judge.judge(live_query(PLAIN_SQL, shop_warehouse, "v2"))
    assert (wrong.decision, wrong.error_class) == ("reject", "unknown_object")
    assert right.decision == "accept"
    assert right.context["verifier_version"] and right.context["catalogue_version"] == 1


def test_the_hypothesis_judge_rejects_only_what_the_probe_confirms(vendor_simulator, shop_warehouse):
    judge = get_backend(simulated_version(backend="hypothesis_probe"))
    fanout = judge.judge(live_query(FANOUT_SQL, shop_warehouse, "h1"))
    plain = judge.judge(live_query(PLAIN_SQL, shop_warehouse, "h2"))
    assert (fanout.decision, fanout.error_class) == ("reject", "join_fanout")
    assert "fans out" in fanout.reason
    assert fanout.context["probe_outcomes"][0]["outcome"] == "confirmed"
    assert plain.decision == "accept"
    assert ProbeRun.objects.filter(outcome="confirmed").count() == 1


def test_a_suspicion_the_probe_refutes_is_an_accept(vendor_simulator, shop_warehouse):
    # The model suspects a fan-out, but joining orders to items keeps one row per item.
    sql = (
        "SELECT SUM(oi.quantity * oi.unit_price) FROM order_items oi JOIN orders o ON o.order_id = oi.order_id "
        "-- sim: wrong join_fanout table=orders grain=oi.item_id"
    )
    result = get_backend(simulated_version(backend="hypothesis_probe")).judge(live_query(sql, shop_warehouse, "h3"))
    assert result.decision == "accept"
    assert result.context["probe_outcomes"][0]["outcome"] == "refuted"


# --- a fault of the check is an error verdict, never an accept or a reject -----------------------

CROSS_JOIN_SQL = "SELECT * FROM orders, customers LIMIT 3"


def test_the_verifier_judge_rejects_on_a_cost_rule(shop_warehouse):
    result = get_backend(simulated_version(backend="verifier")).judge(live_query(CROSS_JOIN_SQL, shop_warehouse, "c1"))
    assert result.decision == "reject", "a cross join is what the verifier exists to catch"
    assert result.error_class == "other" and result.context["failure_class"] == "timeout"
    assert result.reason == "cross join between orders and customers without a join predicate"


def test_the_verifier_judge_answers_error_when_the_warehouse_is_stopped(shop_warehouse, tmp_path):
    (tmp_path / "shop.sqlite3").unlink()
    result = get_backend(simulated_version(backend="verifier")).judge(live_query(PLAIN_SQL, shop_warehouse, "c2"))
    assert result.decision == "error"
    assert result.reason.startswith("verifier could not check: transport:")
    assert result.context["fault"] == "transport" and result.raw_response["outcome"] == "fault"


def test_the_verifier_judge_answers_error_when_docket_refuses_the_text_on_size(shop_warehouse, settings):
    settings.WAREHOUSE_MAX_SQL_BYTES = 40
    result = get_backend(simulated_version(backend="verifier")).judge(live_query(PLAIN_SQL, shop_warehouse, "c3"))
    assert result.decision == "error" and "WAREHOUSE_MAX_SQL_BYTES" in result.reason


def test_the_hypothesis_judge_answers_error_when_every_probe_is_refused(vendor_simulator, shop_warehouse):
    # The model names a grain key that is no key: no sound probe exists, so nothing was checked.
    sql = FANOUT_SQL.replace("grain=oi.item_id", "grain=oi.product")
    result = get_backend(simulated_version(backend="hypothesis_probe")).judge(live_query(sql, shop_warehouse, "h4"))
    assert result.decision == "error"
    assert [o["outcome"] for o in result.context["probe_outcomes"]] == ["refused"]
    assert result.reason.startswith("no probe could run: refused: probe refused:")
    assert not ProbeRun.objects.filter(outcome="confirmed").exists()


def test_the_hypothesis_judge_answers_error_when_the_warehouse_is_stopped(vendor_simulator, shop_warehouse, tmp_path):
    (tmp_path / "shop.sqlite3").unlink()
    result = get_backend(simulated_version(backend="hypothesis_probe")).judge(
        live_query(FANOUT_SQL, shop_warehouse, "h5")
    )
    assert result.decision == "error"
    assert [o["outcome"] for o in result.context["probe_outcomes"]] == ["error"]
