"""More of issue 31's small ones (item 6): the verdict trace shows the request as readable JSON, with the
prompt on its lines, not as escaped JSON; the loop lab opens comparing the measured judges, without zeros."""

import json

import pytest

from judges.models import Backend
from judges.services import judge_live_query
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from labelling.models import Query, QuerySource
from tests.browser.conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
R, A = "reject", "accept"


def test_the_verdict_trace_shows_the_prompt_on_its_lines_and_copies_the_exact_json(
    page, live_server, role_users, demo_warehouse, journey_simulator
):
    judge = make_judge_version(
        "traced-live", backend=Backend.ANTHROPIC, model="sim-journey-sure", config={"simulated": True}
    )
    query = Query.objects.create(
        question="How many orders?",
        sql="SELECT COUNT(*)\nFROM orders",
        dialect="sqlite",
        warehouse=demo_warehouse,
        source=QuerySource.LIVE,
    )
    verdict = judge_live_query(judge_version=judge, query=query)  # a real call to the simulator
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/verdicts/{verdict.pk}/")
    shown = page.inner_text("#request")
    assert "\\n" not in shown  # no escaped line breaks: the prompt reads as written
    assert "How to review:\n" in shown and "SELECT COUNT(*)\n" in shown
    exact = json.loads(page.input_value("#request-json"))  # "Copy as JSON" copies the request as sent
    assert exact["model"] == "sim-journey-sure" and "How to review:\n" in exact["system"][0]["text"]
    assert "\\n" not in page.inner_text("#response")
    screenshot(page, "verdict-trace-readable-1280")


def test_the_loop_lab_opens_comparing_the_measured_judges_and_shows_no_made_up_zeros(page, live_server, role_users):
    version = make_gold_set("lab-open", labels(3, 3))
    run = make_run(version)
    add_verdicts(run, make_judge_version("cheap"), [R, A, A, A, R, A], cost="0.001", latency=120)
    add_verdicts(run, make_judge_version("keen"), [R, R, R, A, A, R], cost="0.002", latency=300)
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/loops/")
    columns = page.locator("#loop-table thead th.checker").all_inner_texts()
    assert len(columns) == 3 and columns[1].startswith("cheap:1") and columns[2].startswith("keen:1"), columns
    assert page.is_checked("input[name=checker][value='cheap:1']")
    # Nothing was entered for the generator and no attempt was recorded: its figures say so, never $0 or 0 ms.
    cost = page.locator("#loop-table tr[data-figure=cost_per_accepted_usd]")
    assert "enter Generator $/call" in cost.inner_text() and "0.0000" not in cost.inner_text()
    latency = page.locator("#loop-table tr[data-figure=latency_ms_p50]")
    assert "enter Generator ms" in latency.inner_text()
    assert "0.0" not in page.input_value("#id_generation_cost")
    screenshot(page, "loop-lab-opened-1280")

    page.fill("#id_generation_cost", "0.01")
    page.click("button:has-text('Compare')")
    page.wait_for_url("**/loops/?*")
    cost = page.locator("#loop-table tr[data-figure=cost_per_accepted_usd]")
    assert "enter Generator $/call" not in cost.inner_text() and "0.0" in cost.inner_text()
    assert page.is_checked("input[name=checker][value='cheap:1']")  # what was submitted stays chosen
