"""The dashboard's run selection, unequal-sample warning and ensemble k, in a real browser."""

import pytest

from judges.report import build_report
from judges.run_selection import RunSelection
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
R, A = "reject", "accept"


@pytest.fixture
def uneven_runs(role_users):
    """alpha and beta over 3 repeats, then an extra 1-repeat run of beta alone on half the items."""
    version = make_gold_set("browser-runs", labels(3, 3))
    alpha, beta = make_judge_version("alpha"), make_judge_version("beta")
    first = make_run(version, label="first", repeats=3)
    for repeat, decisions in enumerate(([R, A, A, A, R, A], [R, R, A, A, A, A], [R, R, R, A, A, R])):
        add_verdicts(first, alpha, decisions, repeat=repeat, latency=100)
        add_verdicts(first, beta, [A, R, R, A, A, R], repeat=repeat, latency=200)
    second = make_run(version, label="extra", repeats=1)
    add_verdicts(second, beta, [R, R, R, None, None, None], latency=200)
    return version, first, second, alpha, beta


def judge_cell(page, judge_version_id, figure):
    return page.locator(f'#judges-table tr[data-judge-version="{judge_version_id}"] [data-figure="{figure}"]')


def test_an_ml_engineer_narrows_the_runs_and_the_warning_goes(page, live_server, uneven_runs):
    version, first, second, alpha, beta = uneven_runs
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{version.pk}/")

    # All completed runs by default: beta rests on more repeats than alpha, and the page says so.
    warning = page.locator(".sample-warning")
    assert warning.count() == 1
    assert "different repeat counts" in warning.inner_text()
    assert page.locator("#runs-used").inner_text() == f"{first.pk}, {second.pk}"
    assert judge_cell(page, beta.pk, "runs").inner_text() == f"{first.pk}, {second.pk}"
    assert judge_cell(page, beta.pk, "verdicts").inner_text() == "21"
    everything = build_report(gold_set_version=version)
    assert judge_cell(page, beta.pk, "catch_rate").get_attribute("data-value") == str(
        everything["judges"][1]["catch_rate"]
    )

    # Type the first run only and recompute: the warning disappears, the figures follow.
    page.fill("#runs", str(first.pk))
    page.get_by_role("button", name="Recompute").click()
    page.wait_for_url(f"**runs={first.pk}**")
    assert page.locator(".sample-warning").count() == 0
    assert page.locator("#runs-used").inner_text() == str(first.pk)
    assert judge_cell(page, beta.pk, "verdicts").inner_text() == "18"
    narrowed = build_report(gold_set_version=version, selection=RunSelection(run_ids=(first.pk,)))
    assert judge_cell(page, beta.pk, "catch_rate").get_attribute("data-value") == str(
        narrowed["judges"][1]["catch_rate"]
    )
    assert page.locator("#runs").input_value() == str(first.pk)

    # The ensemble explorer keeps the selection, refuses k > n, and names rule and k.
    page.select_option("select[name=rule]", "k_of_n")
    page.fill("input[name=k]", "3")
    page.get_by_role("button", name="Score ensemble").click()
    refused = page.locator("#ensemble-result .error")
    refused.wait_for()
    assert "k must be between 1 and 2" in refused.inner_text()
    page.fill("input[name=k]", "2")
    page.get_by_role("button", name="Score ensemble").click()
    description = page.locator("#ensemble-description")
    description.wait_for()
    assert "at least 2 of 2 reject (k_of_n, k=2)" in description.inner_text()

    # A run that is not on this version is refused with the reason, not a server error.
    page.fill("#runs", "99999")
    page.get_by_role("button", name="Recompute").click()
    page.locator("#selection-error").wait_for()
    assert "not a calibration run" in page.locator("#selection-error").inner_text()
