"""Defaults follow the user (issue 31 item 3): the run form starts from where the user came from,
says how big each gold-set version is and what the run would cost; editing a judge starts from
the prompt in use."""

import pytest

from judges.backends.base import DEFAULT_INSTRUCTIONS
from judges.models import Backend
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def judged(role_users):
    big = make_gold_set("big", labels(3, 5))  # 8 items, measured
    make_gold_set("tiny-import", labels(1, 1))  # newer, 2 items: not what a run should default to
    other = make_judge_version("other", backend=Backend.ANTHROPIC, family="claude", model="m-other")
    mine = make_judge_version("mine", backend=Backend.ANTHROPIC, family="claude", model="m-mine")
    add_verdicts(make_run(big), mine, ["reject"] * 3 + ["accept"] * 5, cost="0.002", latency=800.0)
    return {"big": big, "mine": mine, "other": other}


def test_the_run_form_preselects_the_judge_and_the_largest_version_and_estimates_before_start(
    page, live_server, judged
):
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/{judged['mine'].judge_id}/")
    page.click("a:has-text('Start a run')")
    selected = page.locator("#id_gold_set_version option:checked").inner_text()
    assert selected.startswith("big v1") and "8 items" in selected
    assert "2 items" in page.locator("#id_gold_set_version").inner_text()
    assert page.is_checked(f"input[name=judge_versions][value='{judged['mine'].pk}']")
    assert not page.is_checked(f"input[name=judge_versions][value='{judged['other'].pk}']")
    assert "simulated" not in page.inner_text("main p.muted")  # no judge here is simulated
    assert page.inner_text("#estimate-calls") == "24"  # 8 items × 1 version × 3 repeats
    assert page.inner_text("#estimate-cost") == "$0.0480"
    screenshot(page, "run-start-estimate-1280")
    assert_no_sideways_scroll(page)

    page.fill("#id_repeats", "1")
    page.locator("#id_repeats").dispatch_event("change")
    page.locator("#estimate-calls:text-is('8')").wait_for()
    page.check(f"input[name=judge_versions][value='{judged['other'].pk}']")
    page.locator("#estimate-calls:text-is('16')").wait_for()
    assert "not measured yet" in page.inner_text("#run-estimate")


def test_editing_a_judge_starts_from_the_prompt_in_use_so_added_lines_add(page, live_server, judged):
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/{judged['mine'].judge_id}/edit/")
    shown = page.input_value("#id_prompt_template")
    assert shown.strip() == DEFAULT_INSTRUCTIONS.strip()
    page.fill("#id_prompt_template", shown.rstrip() + "\nAlso check the date filters.\nBe brief.\n")
    page.click("button:has-text('Review changes')")
    diff = page.locator("#version-diff pre.diff")
    added = diff.locator(".added").all_inner_texts()
    removed = diff.locator(".removed").all_inner_texts()
    assert [line for line in added if not line.startswith("+++")] == ["+Also check the date filters.", "+Be brief."]
    assert [line for line in removed if not line.startswith("---")] == []
