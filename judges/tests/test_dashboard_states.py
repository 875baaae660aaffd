"""Dashboard and run-form states a new user hit (#21 defects 1, 2, 3, 5, 6, 9, 12)."""

import re

import pytest
from django.urls import reverse

from judges.charts import CHART_WIDTH, ensemble_scatter
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from labelling.models import GoldSetVersion

pytestmark = pytest.mark.django_db
R, A = "reject", "accept"


@pytest.fixture
def measured():
    """v1 of `alpha-set` with a completed run of two judges; v2 published since, with no run."""
    v1 = make_gold_set("alpha-set", labels(2, 2))
    run = make_run(v1)
    add_verdicts(run, make_judge_version("cheap", price_input_per_mtok=1), [R, A, A, A], cost="0.001")
    add_verdicts(run, make_judge_version("keen", price_input_per_mtok=2), [R, R, R, A], cost="0.002")
    v2 = make_gold_set("alpha-set", labels(2, 2), number=2)
    GoldSetVersion.objects.filter(pk=v2.pk).update(is_frozen=True)  # published, as goldset_publish leaves it
    v2.refresh_from_db()
    return v1, v2, run


def selected_version(html: bytes) -> str:
    return re.search(rb'<option value="/judges/dashboard/(\d+)/" selected', html).group(1).decode()


def test_the_run_form_preselects_the_newest_gold_set_version(client_for, measured):
    _, v2, _ = measured
    html = client_for("ml_engineer").get(reverse("judges:run_start")).content.decode()
    assert re.search(rf'<option value="{v2.pk}" selected>', html)


def test_the_run_form_preselects_the_version_a_link_names(client_for, measured):
    v1, _, _ = measured
    html = client_for("ml_engineer").get(reverse("judges:run_start"), {"gold_set_version": v1.pk}).content.decode()
    assert re.search(rf'<option value="{v1.pk}" selected>', html)


def test_a_version_without_runs_is_the_one_its_selector_shows_and_offers_a_run(client_for, measured):
    _, v2, _ = measured
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[v2.pk])).content
    assert selected_version(html) == str(v2.pk)
    assert f'href="{reverse("judges:run_start")}?gold_set_version={v2.pk}"'.encode() in html


def test_the_dashboard_points_out_a_newer_version_without_runs(client_for, measured):
    v1, v2, _ = measured
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[v1.pk])).content
    notice = re.search(rb'<p class="warning" id="newer-version">(.*?)</p>', html, re.S).group(1)
    assert str(v2).encode() in notice and b"start a run on it" in notice


def test_recompute_does_not_send_the_version_selector(client_for, measured):
    v1, _, _ = measured
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[v1.pk])).content.decode()
    select = re.search(r'<select id="version-select"[^>]*>', html).group(0)
    assert "name=" not in select


def test_the_empty_dashboard_links_to_starting_a_run(client_for):
    html = client_for("ml_engineer").get(reverse("judges:dashboard-index")).content
    assert b'id="start-run"' in html


def test_the_item_page_highlights_and_wraps_its_sql(client_for, measured):
    v1, _, _ = measured
    query = v1.items.first().query
    html = client_for("ml_engineer").get(reverse("judges:dashboard-item", args=[v1.pk, query.pk])).content.decode()
    sql = re.search(r'<pre class="sql hl" id="item-sql">(.*?)</pre>', html, re.S).group(1)
    assert '<span class="k">SELECT</span>' in sql


def test_break_even_says_why_it_is_blank_and_marks_the_baseline(client_for, measured):
    v1, _, _ = measured
    client = client_for("ml_engineer")
    without = client.get(reverse("judges:dashboard", args=[v1.pk])).content
    assert b"no baseline</span>" in without and b"Pick a baseline judge above" in without
    with_baseline = client.get(reverse("judges:dashboard", args=[v1.pk]), {"baseline": "cheap:1"}).content
    assert with_baseline.count(b'class="badge baseline-mark"') == 1
    assert b"Break-even $</strong>:" in with_baseline  # defined under Definitions


def point(cost, catch, pareto=True):
    return {
        "cost_per_accepted_usd": cost,
        "catch_rate": catch,
        "false_reject_rate": 0.1,
        "members": ["a"],
        "rule": "any",
        "pareto": pareto,
        "over_ceiling": False,
    }


def test_the_pareto_chart_keeps_its_last_tick_and_axis_title_inside_and_names_frontier_points():
    chart = ensemble_scatter([point(0.0004, 0.5), point(0.002, 1.0)])
    last = chart["ticks_x"][-1]
    assert last["text"] == "$0.002"
    assert last["x"] + len(last["text"]) * 7 / 2 <= CHART_WIDTH  # centred text fits at ~7 px a character
    top_tick = min(chart["ticks_y"], key=lambda t: t["y"])
    assert top_tick["y"] - chart["y_title"]["y"] >= 14  # the axis title sits a line above "100%"
    assert all(p["label_x"] and p["label_anchor"] for p in chart["frontier_points"])


def test_the_judge_page_lists_its_runs_and_the_index_links_compare(client_for, measured):
    _, _, run = measured
    judge = run.judge_versions.first().judge
    make_judge_version(judge.name, number=2)
    client = client_for("ml_engineer")
    detail = client.get(reverse("judges:judge_detail", args=[judge.pk])).content.decode()
    runs_table = re.search(r'<table class="data" id="judge-runs">(.*?)</table>', detail, re.S).group(1)
    assert reverse("judges:run_detail", args=[run.pk]) in runs_table
    index = client.get(reverse("judges:index")).content.decode()
    assert reverse("judges:judge_compare", args=[judge.pk]) in index


def test_a_dashboard_without_ladder_verdicts_says_how_to_measure_the_ladder(client_for, measured):
    v1, _, _ = measured
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[v1.pk])).content.decode()
    section = re.search(r'<section id="ladder">(.*?)</section>', html, re.S).group(1)
    assert "No ladder judge has verdicts" in section
    assert f'href="{reverse("judges:run_start")}?gold_set_version={v1.pk}"' in section
    assert 'id="ladder-table"' not in html
