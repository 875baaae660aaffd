"""An ML engineer reads a judge's prompt, edits it into a new version after seeing the diff,
compares the two versions item by item, and opens a verdict's trace."""

import pytest

from judges.demo import run_inline
from judges.models import Judge, Verdict
from judges.services import judge_create
from labelling.goldset_io import goldset_import
from tests.browser.conftest import demo_gold_slice, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIMULATED = {"simulated": True, "concurrency": 8, "timeout_s": 5, "retry_base_delay_s": 0.01}


def test_an_ml_engineer_edits_a_prompt_into_a_new_version_and_compares_them(
    page, live_server, role_users, demo_warehouse, journey_simulator, tmp_path
):
    gold = goldset_import(path_or_file=demo_gold_slice(tmp_path, count=40), gold_set_name="prompt-journey", fmt="jsonl")
    judge = judge_create(
        name="prompt-journey",
        backend="anthropic",
        family="anthropic",
        model="sim-journey-sure",
        price_input_per_mtok="3",
        price_output_per_mtok="15",
        config=SIMULATED,
        is_simulated=True,
    )
    run_inline(gold_set_version=gold, judge_versions=[judge.latest_version], repeats=1, label="v1")

    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/{judge.pk}/")
    # The full prompt: system text, the demo schema with sample values, the tool, a user turn.
    assert "You review SQL" in page.locator("#prompt-system").inner_text()
    schema = page.locator("#prompt-schema").inner_text()
    assert "TABLE orders" in schema and "values: cancelled, completed, pending, refunded" in schema
    assert "record_verdict" in page.locator("#prompt-tool").inner_text()
    assert "<question>" in page.locator("#prompt-user").inner_text()
    assert "v1" in page.locator("table.metrics").inner_text()

    page.get_by_role("link", name="Edit prompt (new version)").click()
    page.fill("textarea[name=prompt_template]", "Reject any query that joins payments.\nAnswer with the tool.")
    page.fill("input[name=model]", "sim-journey-a")
    page.get_by_role("button", name="Review changes").click()
    diff = page.locator("#version-diff")
    diff.wait_for()
    assert "+Reject any query that joins payments." in diff.inner_text()
    assert "sim-journey-a" in diff.inner_text()
    assert judge.versions.count() == 1  # nothing saved before the review is confirmed
    page.get_by_role("button", name="Save as new version").click()
    page.get_by_role("heading", name="prompt-journey", exact=True).wait_for()
    second = Judge.objects.get(pk=judge.pk).latest_version
    assert second.number == 2 and second.model == "sim-journey-a"
    assert "Reject any query that joins payments." in page.locator("#prompt-system").inner_text()

    run_inline(gold_set_version=gold, judge_versions=[second], repeats=1, label="v2")
    page.reload()
    metrics = page.locator("table.metrics").inner_text()
    assert "v1" in metrics and "v2" in metrics
    page.get_by_role("link", name="Compare versions").click()
    page.locator("#item-diff").wait_for()
    screenshot(page, "judge_versions_compare")
    caught_by_v1_only = page.locator("#caught-by-left li a")
    # v1 (sim-journey-sure) catches every wrong item; v2 misses about half of them.
    assert caught_by_v1_only.count() > 0
    assert page.locator("#caught-by-right li a").count() == 0
    caught_by_v1_only.first.click()
    page.get_by_role("heading", name="Every verdict, by judge").wait_for()
    page.locator("a[href*='/judges/verdicts/']").first.click()
    page.get_by_role("heading", name="Request as sent").wait_for()
    request = page.locator("#request").inner_text()
    assert "TABLE orders" in request and "cache_control" in request
    assert Verdict.objects.filter(judge_version__judge=judge).count() == 80
