"""A simulated judge must name a model the simulator serves, and its figures say "simulated" in the
dashboard's headline as in its row (issue 31: "a simulated judge accepts any model name and reports figures")."""

import json

import pytest

from judges.models import Judge
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.browser.conftest import log_in, new_judge_submit, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
R, A = "reject", "accept"


def test_a_simulated_judge_naming_a_model_the_simulator_does_not_serve_is_refused(
    page, live_server, role_users, journey_simulator
):
    log_in(page, live_server, "ml_engineer-user")
    summary = new_judge_submit(
        page,
        live_server,
        name="looks-like-gpt5",
        backend="openai_compatible",
        family="openai",
        model="gpt-5",
        config='{"simulated": true}',
    )
    summary.wait_for()
    assert summary.bounding_box()["y"] < 600
    top = summary.inner_text()
    assert "serves no model named 'gpt-5'" in top and "sim-journey-a" in top
    assert "sim-journey-a" in page.inner_text(".errorlist")
    assert not Judge.objects.filter(name="looks-like-gpt5").exists()
    screenshot(page, "judge-new-unknown-simulated-model-1280")

    page.fill("#id_model", "sim-journey-a")
    page.click("button:has-text('Save')")
    page.wait_for_url(f"{live_server.url}/judges/*/")
    assert Judge.objects.get(name="looks-like-gpt5").latest_version.is_simulated


def test_the_headline_marks_simulated_figures_as_the_row_and_the_json_do(page, live_server, role_users):
    version = make_gold_set("simhead", labels(3, 3))
    run = make_run(version)
    sim = make_judge_version("sim-cheap", simulated=True, price_input_per_mtok=1)
    add_verdicts(run, sim, [R, R, A, A, A, A], cost="0.001", latency=50)
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/dashboard/{version.pk}/")
    assert page.inner_text("#headline-answer") == "sim-cheap v1"
    badge = page.locator("#headline-simulated")
    assert badge.inner_text() == "simulated" and "sim-cheap v1" in badge.get_attribute("title")
    assert "not the vendor's model" in page.inner_text("#headline-simulated-note")
    assert "simulated" in page.inner_text(f"#judges-table tr[data-judge-version='{sim.pk}']")
    report = json.loads(page.request.get(f"{live_server.url}/judges/dashboard/{version.pk}/report.json").text())
    (entry,) = report["judges"]
    assert entry["simulation"] == "simulated"
    screenshot(page, "dashboard-headline-simulated-1280")
