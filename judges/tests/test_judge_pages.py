"""The judge page (prompt, versions with metrics), edit with diff, item-by-item comparison, verdict page."""

import io
import json
from decimal import Decimal

import pytest
from django.urls import reverse

from judges.demo import run_inline
from judges.models import Verdict
from judges.services import judge_version_create
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from labelling.demo import demo_gold_load
from labelling.models import GoldSetVersion
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, register_demo_warehouse

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_catalogue(settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    path = tmp_path / "demo.sqlite3"
    build_demo_warehouse(str(path))
    return catalogue_refresh(warehouse=register_demo_warehouse(str(path)))


def test_the_judge_page_shows_the_full_prompt_with_a_real_schema_slice(client_for, demo_catalogue):
    demo_gold_load(io.StringIO())
    version = simulated_version(name="shown")
    page = client_for("ml_engineer").get(reverse("judges:judge_detail", args=[version.judge.pk])).content.decode()
    assert "You review SQL that another model wrote" in page  # system
    assert "record_verdict" in page and "&quot;input_schema&quot;" in page  # tool definition
    assert "TABLE orders (~3000 rows)" in page  # the demo catalogue, shared prefix
    assert "values: cancelled, completed, pending, refunded" in page
    assert "&lt;question&gt;" in page  # an example user turn
    assert "sim-perfect" in page and "3.7500" in page  # model and prices


def test_the_judge_page_lists_each_versions_metrics_per_gold_set_version(client_for, vendor_simulator):
    gold = gold_set_version_with(mixed_items(6, 4))
    first = simulated_version(name="metered")
    second = judge_version_create(
        judge=first.judge,
        backend="anthropic",
        model="sim-perfect",
        prompt_template="Be strict.",
        price_input_per_mtok=Decimal("3"),
        price_output_per_mtok=Decimal("15"),
        config={"simulated": True, "retry_base_delay_s": 0.01},
    )
    run_inline(gold_set_version=gold, judge_versions=[first, second], repeats=2)
    page = client_for("ml_engineer").get(reverse("judges:judge_detail", args=[first.judge.pk])).content.decode()
    assert str(gold) in page
    table = page.split('class="data metrics"')[1].split("</table>")[0]
    assert "<td>v1</td>" in table and "<td>v2</td>" in table
    # sim-perfect catches all 4 wrong items and rejects none of the 6 correct ones.
    assert "1.000 (" in table and "0.000 (" in table


def test_two_versions_are_compared_item_by_item(client_for, vendor_simulator):
    gold = gold_set_version_with(mixed_items(6, 8))
    perfect = simulated_version(name="compared")
    blunt = judge_version_create(
        judge=perfect.judge,
        backend="anthropic",
        model="sim-anything-else",  # the simulator's default model: catches some, not all
        config={"simulated": True, "retry_base_delay_s": 0.01},
    )
    run_inline(gold_set_version=gold, judge_versions=[perfect, blunt], repeats=1)
    missed_by_blunt = {
        v.query.external_id
        for v in Verdict.objects.filter(judge_version=blunt, decision="accept").select_related("query")
        if gold.items.get(query=v.query).decision == "wrong"
    }
    response = client_for("ml_engineer").get(
        reverse("judges:judge_compare", args=[perfect.judge.pk]), {"left": 1, "right": 2, "gold": gold.pk}
    )
    items = response.context["items"]
    assert {i["external_id"] for i in items["caught_by_left_only"]} == missed_by_blunt
    assert items["caught_by_right_only"] == []
    assert items["false_reject_left_only"] == []
    assert items["compared"] == 14


def test_the_verdict_page_shows_a_calibration_trace_to_ml_engineers_only(client_for, vendor_simulator):
    gold = gold_set_version_with(mixed_items(1, 1))
    version = simulated_version(name="traced")
    run_inline(gold_set_version=gold, judge_versions=[version], repeats=1)
    verdict = Verdict.objects.filter(judge_version=version).first()
    url = reverse("judges:verdict_detail", args=[verdict.pk])
    # An analyst reads live verdicts only (judges/tests/test_object_access.py).
    for who, status in [("ml_engineer", 200), ("analyst", 404), ("admin", 200), ("labeller", 403), ("outsider", 403)]:
        assert client_for(who).get(url).status_code == status, who
    page = client_for("ml_engineer").get(url).content.decode()
    assert "simulated" in page and "Request as sent" in page
    assert json.dumps(verdict.raw_response["id"]) in page.replace("&quot;", '"')
    assert "cache write" in page
    # The dashboard item page links to it.
    item = client_for("ml_engineer").get(reverse("judges:dashboard-item", args=[gold.pk, verdict.query_id]))
    assert url in item.content.decode()


def test_gold_set_version_pages_are_unaffected_by_an_empty_judge(client_for):
    version = simulated_version(name="never-run")
    response = client_for("ml_engineer").get(reverse("judges:judge_compare", args=[version.judge.pk]))
    assert response.status_code == 200 and response.context["items"] is None
    assert not GoldSetVersion.objects.exists()
