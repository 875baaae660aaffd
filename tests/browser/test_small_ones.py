"""The small ones of issue 31 (item 6): the judge compare page fits 1280 px and shows config as JSON;
the verdict trace links back to its item, run and dashboard and counts repeats from 1."""

import pytest

from judges.models import Backend, Verdict
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_compare_page_fits_1280_and_shows_config_as_json(page, live_server, role_users):
    long_prompt = "Check every join key against the catalogue before answering. " * 40
    config = {"simulated": True, "concurrency": 4, "note": "x" * 400}
    make_judge_version("wide", backend=Backend.ANTHROPIC, model="m", config=config)
    second = make_judge_version("wide", number=2, backend=Backend.ANTHROPIC, model="m", prompt_template=long_prompt)
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/{second.judge_id}/compare/")
    settings = page.inner_text("table.settings-compare")
    assert '"simulated": true' in settings and "True" not in settings
    assert_no_sideways_scroll(page)
    screenshot(page, "judge-compare-1280")


def test_the_verdict_trace_links_back_and_counts_repeats_from_one(page, live_server, role_users):
    version = make_gold_set("trace", labels(1, 1))
    run = make_run(version)
    judge = make_judge_version("tracer")
    add_verdicts(run, judge, ["reject", "accept"], cost="0.001", latency=10)
    verdict = Verdict.objects.filter(run=run).order_by("pk").first()
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/verdicts/{verdict.pk}/")
    assert "repeat 1 of 1" in page.inner_text("main")
    links = page.locator("#verdict-links a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert f"/judges/dashboard/{version.pk}/items/{verdict.query_id}/" in hrefs
    assert f"/judges/runs/{run.pk}/" in hrefs
    assert f"/judges/dashboard/{version.pk}/?runs={run.pk}" in hrefs
    page.click("#verdict-links a:has-text('The item')")
    page.wait_for_url(f"{live_server.url}/judges/dashboard/{version.pk}/items/{verdict.query_id}/")


def test_the_loop_lab_answers_a_wrong_ensemble_syntax_with_the_syntax(page, live_server, role_users):
    version = make_gold_set("lab", labels(2, 2))
    add_verdicts(make_run(version), make_judge_version("a"), ["reject", "accept", "accept", "accept"], cost="0.001")
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/loops/")
    page.fill("#id_ensemble", "a & b")
    page.click("button:has-text('Compare')")
    error = page.locator("[role=alert]").first
    error.wait_for()
    assert "is not a checker" in error.inner_text() and '"a+b+c@majority"' in error.inner_text()
    assert "has no verdicts" not in page.inner_text("main")
