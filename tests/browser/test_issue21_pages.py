"""Pages a new user found broken (#21): overflow, the run form, the triage undo and queue search."""

import pytest

from judges.tests.calibration_builders import labels, make_gold_set, make_judge_version
from labelling.tests.factories import gold_set, query
from tests.browser.conftest import assert_no_sideways_scroll, log_in
from triage.models import TriageItem, TriageStatus
from triage.queue import triage_item_claim_next
from triage.tests.factories import triage_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_question_of_twenty_thousand_characters_without_a_space_wraps(page, live_server, role_users):
    gs = gold_set(name="wide")
    query(gold_set=gs, question="x" * 20_000, sql="SELECT " + "a" * 3_000 + " FROM t")
    log_in(page, live_server, "labeller-user")
    page.goto(f"{live_server.url}/labelling/queue/wide/")
    page.locator(".label-item .question").wait_for()
    assert_no_sideways_scroll(page)


def test_the_run_form_puts_each_checkbox_on_its_labels_line_and_chooses_a_version(page, live_server, role_users):
    version = make_gold_set("only-one", labels(1, 1))
    make_judge_version("sim-a", backend="anthropic")
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/judges/runs/new/")
    assert page.locator("select[name=gold_set_version]").input_value() == str(version.pk)
    label = page.locator("#id_judge_versions label").first
    box = label.locator("input[type=checkbox]").bounding_box()
    line = label.bounding_box()
    assert box["height"] >= line["height"] * 0.5, (box, line)  # one line: the box is as tall as the label
    assert box["x"] - line["x"] < 20, (box, line)  # at the start of the line, not centred above it


def test_an_analyst_decides_with_a_key_sees_a_saved_toast_and_undoes_with_z(page, live_server, role_users):
    first = triage_item(probe_confirmed=True)
    triage_item()
    assert triage_item_claim_next(analyst=role_users["analyst"]) == first
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/items/{first.pk}/")
    page.keyboard.press("f")
    toast = page.locator("#undo-toast")
    toast.wait_for()
    assert f"Saved: item {first.pk}" in toast.inner_text()
    assert TriageItem.objects.get(pk=first.pk).status == TriageStatus.RESOLVED

    page.keyboard.press("z")
    page.wait_for_url(f"{live_server.url}/triage/items/{first.pk}/")
    assert page.locator("#decision-form").count() == 1  # the analyst holds it again
    first.refresh_from_db()
    assert first.status == TriageStatus.CLAIMED and first.resolution == ""


def test_the_queue_searches_filters_counts_and_pages(page, live_server, role_users):
    for _ in range(27):
        triage_item(probe_confirmed=True)
    wanted = triage_item()
    wanted.query.question = "Revenue per flamingo"
    wanted.query.save()
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/")
    assert page.locator("#queue-count").inner_text() == "28 items waiting · showing 1–25."
    page.get_by_role("link", name="Next →").click()
    assert page.locator("table.queue-table tbody tr").count() == 3

    page.goto(f"{live_server.url}/triage/")
    page.fill("#queue-search", "flamingo")
    page.get_by_role("button", name="Filter").click()
    assert page.locator("#queue-count").inner_text() == "1 of 28 waiting items match."
    assert page.locator("table.queue-table tbody tr").inner_text().startswith("")
    assert "Revenue per flamingo" in page.locator("table.queue-table tbody").inner_text()

    page.select_option("select[name=probe]", "confirmed")
    page.get_by_role("button", name="Filter").click()
    assert "No waiting item matches these filters" in page.locator("table.queue-table tbody").inner_text()
