"""The dashboard shows what it writes whole (issue 31 item 4): the Runs placeholder is not clipped, and
every Pareto frontier label is the point's full name, wrapped, inside the chart."""

import pytest

from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.browser.conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
R, A = "reject", "accept"
LONG_CHEAP = "a-cheap-judge-with-a-rather-long-descriptive-name"
LONG_KEEN = "the-keen-judge-that-also-has-a-long-name"

PLACEHOLDER_FITS = """(input) => {
  const style = getComputedStyle(input);
  const context = document.createElement("canvas").getContext("2d");
  context.font = style.font;
  const text = context.measureText(input.placeholder).width;
  const inner = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return [Math.round(text), Math.round(inner)];
}"""


@pytest.fixture
def long_names(role_users):
    version = make_gold_set("fits", labels(4, 4))
    run = make_run(version)
    cheap = make_judge_version(LONG_CHEAP, price_input_per_mtok=1)
    keen = make_judge_version(LONG_KEEN, price_input_per_mtok=2)
    add_verdicts(run, cheap, [R, R, A, A, A, A, A, A], cost="0.001", latency=100)
    add_verdicts(run, keen, [R, R, R, R, A, A, A, A], cost="0.004", latency=300)
    return version


@pytest.mark.parametrize("width", [1280, 1440])
def test_the_runs_placeholder_is_shown_whole(page, live_server, long_names, width):
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{long_names.pk}/")
    text, inner = page.locator("#runs").evaluate(PLACEHOLDER_FITS)
    assert text <= inner, f"the placeholder needs {text}px and the box shows {inner}px"


def test_every_frontier_label_is_the_full_name_inside_the_chart(page, live_server, long_names):
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{long_names.pk}/")
    chart = page.locator("#pareto-chart")
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    names = page.locator("#pareto-chart + table tbody td:first-child").all_inner_texts()
    shown = page.locator("#pareto-chart text.point-label")
    assert shown.count() == len(names) >= 2
    for i in range(shown.count()):
        label = shown.nth(i)
        lines = label.locator("tspan").all_text_contents()
        assert "".join(lines).replace(" ", "") == names[i].replace(" ", "")  # wrapped, never cut
        at = label.bounding_box()
        assert box["x"] <= at["x"] and at["x"] + at["width"] <= box["x"] + box["width"], (names[i], at)
        assert box["y"] <= at["y"] and at["y"] + at["height"] <= box["y"] + box["height"], (names[i], at)
    screenshot(page, "dashboard-frontier-labels-1280")
