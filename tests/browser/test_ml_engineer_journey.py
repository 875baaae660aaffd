"""Journey 2: an ML engineer registers a judge, runs a calibration, reads the dashboard, downloads the report."""

import json
from decimal import Decimal

import pytest

from judges.models import CalibrationRun, Judge, RunStatus, Verdict
from judges.report import build_report
from judges.services import judge_create
from labelling.goldset_io import goldset_import
from tests.browser.conftest import SCREENSHOTS, assert_no_sideways_scroll, demo_gold_slice, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

ITEMS = 40
REPEATS = 2
SIMULATED = {"simulated": True, "concurrency": 8, "timeout_s": 5, "retry_base_delay_s": 0.01}


@pytest.fixture
def small_gold_set_version(tmp_path, demo_warehouse):
    return goldset_import(path_or_file=demo_gold_slice(tmp_path, count=ITEMS), gold_set_name="calib-small", fmt="jsonl")


@pytest.fixture
def existing_judge(journey_simulator):
    """A simulated judge already registered, so the new one has someone to overlap with."""
    return judge_create(
        name="gpt-journey",
        backend="openai_compatible",
        family="openai",
        model="sim-journey-b",
        price_input_per_mtok=Decimal("2.5"),
        price_output_per_mtok=Decimal("10"),
        config=SIMULATED,
        is_simulated=True,
    )


def register_judge_through_the_form(page, live_server):
    page.locator("header nav").get_by_role("link", name="Judges").click()
    page.get_by_role("link", name="New judge").click()
    page.fill("input[name=name]", "claude-journey")
    page.fill("textarea[name=description]", "Simulated Claude-family judge for the journey.")
    page.select_option("select[name=backend]", "anthropic")
    page.fill("input[name=family]", "anthropic")
    page.fill("input[name=model]", "sim-journey-a")
    page.fill("input[name=price_input_per_mtok]", "3")
    page.fill("input[name=price_output_per_mtok]", "15")
    page.fill("textarea[name=config]", json.dumps(SIMULATED))
    page.get_by_role("button", name="Save").click()
    page.get_by_role("heading", name="claude-journey").wait_for()
    return Judge.objects.get(name="claude-journey").latest_version


def sometimes_accepts(run, judge_version) -> set[int]:
    """Query ids this judge accepted at least once: a non-zero chance it misses them (the dashboard's "missed")."""
    return set(
        Verdict.objects.filter(run=run, judge_version=judge_version, decision="accept").values_list(
            "query_id", flat=True
        )
    )


def test_an_ml_engineer_calibrates_a_new_judge_and_reads_the_dashboard(
    page, live_server, role_users, small_gold_set_version, existing_judge, journey_worker, tmp_path
):
    log_in(page, live_server, "ml_engineer-user")
    new_version = register_judge_through_the_form(page, live_server)
    assert new_version.is_simulated and new_version.model == "sim-journey-a"
    old_version = existing_judge.latest_version

    page.locator("header nav").get_by_role("link", name="Judges").click()
    page.get_by_role("link", name="Start a calibration run").click()
    page.select_option("select[name=gold_set_version]", str(small_gold_set_version.pk))
    page.check(f"input[name=judge_versions][value='{new_version.pk}']")
    page.check(f"input[name=judge_versions][value='{old_version.pk}']")
    page.fill("input[name=repeats]", str(REPEATS))
    page.fill("input[name=label]", "journey")
    page.get_by_role("button", name="Start").click()

    page.locator("#run-progress").wait_for()
    page.wait_for_function(
        "() => parseFloat(document.querySelector('#run-progress .progress').getAttribute('aria-valuenow')) >= 100",
        timeout=60_000,
    )
    dashboard_link = page.get_by_role("link", name="Compare judges on calib-small v1")
    dashboard_link.wait_for(timeout=30_000)
    # The finished run reloads once: its counts are current and it can no longer be cancelled.
    page.get_by_role("button", name="Cancel run").wait_for(state="detached")
    counts = page.locator("table.data tbody tr", has_text="claude-journey v1").locator("td")
    assert sum(int(counts.nth(i).inner_text()) for i in (1, 2, 3)) == ITEMS * REPEATS
    screenshot(page, "journey-ml-engineer-run")
    run = CalibrationRun.objects.get(label="journey")
    assert run.status == RunStatus.COMPLETED
    assert Verdict.objects.filter(run=run).count() == ITEMS * REPEATS * 2

    dashboard_link.click()
    page.get_by_role("heading", name="Judge comparison").wait_for()
    report = build_report(gold_set_version=small_gold_set_version)
    expected = {entry["name"]: entry["catch_rate"] for entry in report["judges"]}
    row = page.locator("#judges-table tbody tr", has_text="claude-journey v1")
    shown_catch = row.locator('[data-figure="catch_rate"]').inner_text().splitlines()[0]
    assert shown_catch == f"{expected['claude-journey']:.3f}"
    assert_no_sideways_scroll(page)
    table_widths = page.locator("#judges-table .table-scroll").evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert table_widths[0] <= table_widths[1], f"the judges table scrolls sideways: {table_widths}"
    screenshot(page, "journey-ml-engineer-dashboard")

    # Both judges share a seed, so they miss the same wrong items: the overlap cell lists them
    # with the probability both miss each, and those probabilities sum to the cell.
    wrong = set(small_gold_set_version.items.filter(decision="wrong").values_list("query_id", flat=True))
    both_missed = wrong & sometimes_accepts(run, new_version) & sometimes_accepts(run, old_version)
    assert both_missed, "the simulated judges should share some misses"
    page.locator("#overlap svg").first.locator("g.cell[hx-get]").first.click()
    missed = page.locator("#missed-items")
    missed.get_by_role("heading").wait_for()
    heading = missed.get_by_role("heading").inner_text()
    assert f"over {len(both_missed)} item" in heading
    listed = [
        float(v) for v in missed.locator("td.missed-probability").evaluate_all("els => els.map(e => e.dataset.value)")
    ]
    assert sum(listed) == pytest.approx(report["pairs"][0]["both_missed"])
    shown_ids = set(missed.locator("tbody td:first-child a").all_inner_texts())
    external = dict(small_gold_set_version.items.values_list("query_id", "query__external_id"))
    assert shown_ids == {external[q] for q in both_missed}
    screenshot(page, "journey-ml-engineer-missed")
    page.locator("#overlap .charts").screenshot(path=str(SCREENSHOTS / "journey-ml-engineer-heatmaps.png"))

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download JSON report").click()
    path = tmp_path / "report.json"
    download_info.value.save_as(path)
    downloaded = json.loads(path.read_text())
    assert downloaded["gold_set"] == "calib-small" and downloaded["version"] == 1
    assert downloaded["runs"] == [run.pk]
    assert downloaded["items"] == report["items"]
    assert {j["name"] for j in downloaded["judges"]} == {"claude-journey", "gpt-journey"}
    for judge in downloaded["judges"]:
        assert {"catch_rate", "false_reject_rate", "catch_rate_ci95", "cost_per_verdict_usd"} <= set(judge)
    assert len(downloaded["pairs"]) == 1 and "both_missed" in downloaded["pairs"][0]
    assert {j["name"]: j["catch_rate"] for j in downloaded["judges"]} == expected
