"""Journey: an ML engineer opens the loop lab from the judges page and compares two checkers side by side."""

import pytest

from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from loops.selectors import EnteredInputs, loop_report_build
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def calibrated():
    """A gold set with 20 wrong and 80 correct items and two judges' verdicts on it."""
    version = make_gold_set("lab-gold", labels(20, 80))
    run = make_run(version)
    verifier = make_judge_version("schema-verifier", backend="verifier")
    graded = make_judge_version("graded-judge")
    add_verdicts(run, verifier, ["reject"] * 14 + ["accept"] * 6 + ["reject"] + ["accept"] * 79, latency=4.0)
    add_verdicts(
        run, graded, ["reject"] * 15 + ["accept"] * 5 + ["reject"] * 5 + ["accept"] * 75, cost="0.019", latency=2100.0
    )
    return version


def test_an_ml_engineer_compares_two_checkers_in_the_loop_lab(page, live_server, role_users, calibrated):
    log_in(page, live_server, "ml_engineer-user")
    page.locator("header nav").get_by_role("link", name="Judges").click()
    page.get_by_role("link", name="Loop lab").click()
    page.get_by_role("heading", name="Loop lab").wait_for()

    page.get_by_label("schema-verifier:1").check()
    page.get_by_label("graded-judge:1").check()
    page.get_by_label("Generator $/call").fill("0.0041")
    page.get_by_label("Escalation $/call").fill("0.06")
    page.get_by_role("button", name="Compare").click()

    table = page.locator("#loop-table")
    table.wait_for()
    headers = [text.split("catch")[0].strip() for text in table.locator("thead th.checker").all_inner_texts()]
    # Checkers appear in the order the page lists them (by name), after the baseline.
    assert headers == ["no checker", "graded-judge:1", "schema-verifier:1"]

    entered = EnteredInputs(generation_cost_usd=0.0041, escalation_cost_usd=0.06)
    report = loop_report_build(gold_set_version=calibrated, checker_specs=headers[1:], entered=entered)
    cost_cells = table.locator("tr[data-figure=cost_per_accepted_usd] td")
    for index, checker in enumerate(report["checkers"]):
        cell = cost_cells.nth(index).inner_text()
        assert cell.startswith(f"{checker['cost_per_accepted_usd']['value']:.4f}"), (checker["checker"], cell)
        low, high = checker["cost_per_accepted_usd"]["ci95"]
        assert f"[{low:.4f} – {high:.4f}]" in cell
    wrong = table.locator("tr[data-figure=wrong_shipped_per_1000] td").all_inner_texts()
    assert wrong[0].startswith("200.0")  # no checker ships every wrong draft: 20 of 100
    assert len(table.locator("tr[data-figure=latency_ms_p99] td").all_inner_texts()) == 3
    assert_no_sideways_scroll(page)
    screenshot(page, "loop-lab")
