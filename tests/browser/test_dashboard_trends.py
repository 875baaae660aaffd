"""The dashboard's trend charts and confusion matrices, in a real browser (issue 21)."""

import pytest

from judges.report import build_report
from judges.run_selection import RunSelection
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
R, A = "reject", "accept"


@pytest.fixture
def two_runs(role_users):
    """alpha v1 in a first run; after a prompt change, alpha v2 in a second."""
    version = make_gold_set("browser-trends", labels(3, 3))
    first_version, second_version = make_judge_version("alpha"), make_judge_version("alpha", number=2)
    first, second = make_run(version, label="before"), make_run(version, label="after")
    add_verdicts(first, first_version, [R, A, A, R, A, A])
    add_verdicts(second, second_version, [R, R, R, A, A, A])
    return version, first, second, second_version


def test_an_ml_engineer_sees_a_judge_over_two_runs_and_opens_a_confusion_cell(page, live_server, two_runs):
    version, first, second, second_version = two_runs
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{version.pk}/")

    # One point per run on each chart, oldest on the left, joined by one line.
    for metric in ("catch_rate", "false_reject_rate"):
        chart = page.locator(f"#trend-{metric}")
        points = chart.locator("circle.trend-point")
        assert points.count() == 2
        assert [points.nth(i).get_attribute("data-run") for i in range(2)] == [str(first.pk), str(second.pk)]
        assert float(points.nth(0).get_attribute("cx")) < float(points.nth(1).get_attribute("cx"))
        assert chart.locator("polyline.trend-line").count() == 1
        assert chart.get_attribute("role") == "img"
        assert chart.locator("text.run-tick").all_text_contents() == [f"run {first.pk}", f"run {second.pk}"]
    for run in (first, second):
        report = build_report(gold_set_version=version, selection=RunSelection(run_ids=(run.pk,)))
        point = page.locator(f'#trend-catch_rate circle[data-run="{run.pk}"]')
        assert float(point.get_attribute("data-value")) == report["judges"][0]["catch_rate"]
    # After the change alpha catches every wrong item; the point's title says which run it is.
    assert "after (run" in page.locator(f'#trend-catch_rate circle[data-run="{second.pk}"] title').text_content()

    # The selection covers both runs, so v2's matrix is its run's: every wrong item rejected.
    matrix = page.locator(f'table.confusion[data-judge-version="{second_version.pk}"]')
    assert matrix.locator(".wrong-reject").get_attribute("data-value") == "3"
    matrix.locator(".wrong-reject a").click()
    title = page.locator("#cell-items-title")
    title.wait_for()
    assert title.inner_text() == "3 wrong items alpha v2 decided reject"
    links = page.locator("#cell-items table.cell-list a")
    assert links.all_inner_texts() == ["q000", "q001", "q002"]

    # And from the list to the item itself.
    links.first.click()
    page.wait_for_url("**/items/**")
    assert "q000" in page.content()
