"""The dashboard answers "which judge do we trust?" at the top (issue 31 item 4): the cheapest point
of the Pareto frontier under the ceiling with its intervals, a note when the data cannot tell it
from the best catcher yet, headers that explain themselves, round ticks, lists that come into view."""

import re

import pytest

from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
R, A = "reject", "accept"


@pytest.fixture
def measured(role_users):
    version = make_gold_set("headline", labels(3, 3))
    run = make_run(version)
    add_verdicts(run, make_judge_version("cheap"), [R, A, A, A, R, A], cost="0.0009293", latency=120)
    add_verdicts(run, make_judge_version("keen"), [R, R, R, A, A, R], cost="0.0031", latency=300)
    return version


@pytest.mark.parametrize("width", [1280, 1440])
def test_the_headline_names_the_cheapest_frontier_judge_with_intervals_and_says_when_not_separable(
    page, live_server, measured, width
):
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{measured.pk}/?fr_ceiling=0.7")
    headline = page.locator("#headline")
    assert headline.bounding_box()["y"] < 900  # at the top, seen without scrolling
    assert page.inner_text("#headline-answer") == "cheap v1"
    assert re.search(r"catches 0\.33 \[0\.\d\d, 0\.\d\d\]", headline.inner_text())
    note = page.inner_text("#headline-note")
    assert note.startswith("Not separable yet from") and re.search(r"label ~\d+ more wrong items", note)
    headline.screenshot(path=str(screenshot(page, f"dashboard-headline-{width}").with_name(f"headline-{width}.png")))
    assert_no_sideways_scroll(page)


def test_every_judges_column_explains_itself_and_links_to_its_definition(page, live_server, measured):
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{measured.pk}/")
    headers = page.locator("#judges-table thead th")
    assert headers.count() >= 10
    for index in range(headers.count()):
        header = headers.nth(index)
        assert header.get_attribute("title"), header.inner_text()
        target = header.locator("a.def-link").get_attribute("href")
        assert page.locator(target).count() == 1, target
    page.locator("#judges-table thead th", has_text="Break-even").locator("a.def-link").click()
    assert page.locator("#def-break-even").bounding_box()["y"] < 900
    assert_no_sideways_scroll(page)


def test_pareto_ticks_are_round_and_a_heatmap_click_brings_its_list_into_view(page, live_server, measured):
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{measured.pk}/?fr_ceiling=0.7")
    ticks = page.locator("#pareto-chart text[text-anchor=middle]").all_text_contents()
    money = [t for t in ticks if t.startswith("$")]
    assert money and all(re.fullmatch(r"\$\d+(\.\d{1,3})?", t) for t in money), money  # not $0.0009293
    page.locator("g.cell[hx-get]").first.click()
    page.locator("#missed-items h3, #missed-items p, #missed-items table").first.wait_for()
    box = page.locator("#missed-items").bounding_box()
    assert -2 <= box["y"] < 900, box  # scrolled into view, not loaded off-screen
