"""The dashboard's trends over runs and confusion matrices, through the views."""

import re

import pytest
from django.urls import reverse
from django.utils import translation

from judges.report import build_report
from judges.run_selection import RunSelection
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run

pytestmark = pytest.mark.django_db
R, A, E = "reject", "accept", "error"


@pytest.fixture
def two_runs():
    """3 wrong + 3 correct items; alpha v1 in the first run, alpha v2 and beta in the second."""
    version = make_gold_set("trends", labels(3, 3))
    alpha1, alpha2, beta = (
        make_judge_version("alpha"),
        make_judge_version("alpha", number=2),
        make_judge_version("beta"),
    )
    first, second = make_run(version, label="first"), make_run(version, label="second")
    add_verdicts(first, alpha1, [R, A, A, R, A, A])
    add_verdicts(second, alpha2, [R, R, A, A, A, A])
    add_verdicts(second, beta, [R, A, E, R, R, None])
    return version, first, second, alpha1, alpha2, beta


def cell_value(html, pattern):
    match = re.search(pattern, html, re.S)
    assert match, pattern
    return match.group(1)


def test_each_point_is_the_report_of_its_run_alone(client_for, two_runs):
    version, first, second, alpha1, alpha2, beta = two_runs
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    assert 'id="trend-catch_rate"' in html and 'id="trend-false_reject_rate"' in html
    for run, judge in ((first, alpha1), (second, alpha2), (second, beta)):
        report = build_report(gold_set_version=version, selection=RunSelection(run_ids=(run.pk,)))
        entry = next(j for j in report["judges"] if j["judge_version_id"] == judge.pk)
        row = rf'<tr data-run="{run.pk}" data-judge-version="{judge.pk}">.*?'
        assert cell_value(html, row + r'data-figure="catch_rate" data-value="([^"]*)"') == str(entry["catch_rate"])
        assert cell_value(html, row + r'data-figure="false_reject_rate" data-value="([^"]*)"') == str(
            entry["false_reject_rate"]
        )
    # alpha's two versions make one line of two points; beta, in one run, is a point and no line.
    alpha_series = cell_value(html, r'id="trend-catch_rate".*?data-series="alpha">(.*?)</g>')
    assert alpha_series.count("<polyline") == 1 and alpha_series.count('class="trend-point"') == 2
    beta_series = cell_value(html, r'id="trend-catch_rate".*?data-series="beta">(.*?)</g>')
    assert "<polyline" not in beta_series and beta_series.count('class="trend-point"') == 1
    assert 'role="img" aria-label="Catch rate of each judge per calibration run over time"' in html


def test_the_confusion_matrix_counts_majority_decisions_against_gold(client_for, two_runs):
    version, *_, beta = two_runs
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    table = cell_value(html, rf'<table class="data confusion" data-judge-version="{beta.pk}">(.*?)</table>')
    counts = dict(re.findall(r'class="num confusion-cell (\w+-\w+)".*?data-value="(\d+)"', table))
    # beta: wrong items R, A, E; correct items R, R and one without a verdict (counted nowhere).
    assert counts == {
        "wrong-reject": "1",
        "wrong-accept": "1",
        "wrong-error": "1",
        "correct-reject": "2",
        "correct-accept": "0",
        "correct-error": "0",
    }


def test_a_cell_opens_its_items(client_for, two_runs):
    version, *_, beta = two_runs
    url = reverse("judges:dashboard-cell", args=[version.pk])
    html = client_for("ml_engineer").get(url, {"judge": beta.pk, "gold": "correct", "decision": "reject"})
    assert html.status_code == 200
    body = html.content.decode()
    assert "2 correct items beta v1 decided reject" in body
    assert re.findall(r">(q\d+)</a>", body) == ["q003", "q004"]
    assert (
        reverse("judges:dashboard-item", args=[version.pk, version.items.get(query__external_id="q003").query_id])
        in body
    )


def test_a_cell_is_a_whole_page_in_a_tab_and_its_list_alone_for_htmx(client_for, two_runs):
    version, *_, beta = two_runs
    url = reverse("judges:dashboard-cell", args=[version.pk])
    params = {"judge": beta.pk, "gold": "correct", "decision": "reject"}
    client = client_for("ml_engineer")
    page = client.get(url, params).content.decode()
    assert page.lstrip().lower().startswith("<!doctype html>") and "<title>" in page and 'lang="en"' in page
    assert reverse("judges:dashboard", args=[version.pk]) in page  # the way back
    fragment = client.get(url, params, HTTP_HX_REQUEST="true").content.decode()
    assert "<title>" not in fragment and "decided reject" in fragment


def test_a_bad_cell_is_refused_with_the_reason(client_for, two_runs):
    version, *_ = two_runs
    url = reverse("judges:dashboard-cell", args=[version.pk])
    response = client_for("ml_engineer").get(url, {"judge": "999999", "gold": "wrong", "decision": "reject"})
    assert response.status_code == 400
    assert "no verdicts in this run selection" in response.content.decode()
    response = client_for("ml_engineer").get(url, {"judge": "1", "gold": "maybe", "decision": "reject"})
    assert response.status_code == 400


@pytest.mark.parametrize("who", ["labeller", "analyst"])
def test_only_ml_engineers_open_a_cell(client_for, two_runs, who):
    version, *_, beta = two_runs
    url = reverse("judges:dashboard-cell", args=[version.pk])
    assert client_for(who).get(url, {"judge": beta.pk, "gold": "wrong", "decision": "reject"}).status_code == 403


def test_chart_coordinates_and_data_values_stay_machine_numbers_in_a_decimal_comma_locale(client_for, two_runs):
    """Under a locale that writes 0,5, an SVG coordinate written so would break the chart."""
    version = two_runs[0]
    with translation.override("de"):
        html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    numbers = re.findall(r'(?:cx|cy|data-value)="([^"]*)"', cell_value(html, r'(<section id="trends">.*?</section>)'))
    assert numbers and all("," not in number for number in numbers), numbers
    assert any("." in number for number in numbers)
