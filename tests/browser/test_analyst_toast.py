"""The analyst's "saved" toast covers no control and goes away (issue 31 item 5)."""

import pytest

from tests.browser.conftest import log_in, screenshot
from triage.queue import triage_item_claim_next
from triage.tests.factories import triage_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and (b["y"] < a["y"] + a["height"])
    )


def test_the_saved_toast_covers_no_button_and_goes_away(page, live_server, role_users):
    first = triage_item(probe_confirmed=True)
    triage_item(probe_confirmed=True)
    triage_item_claim_next(analyst=role_users["analyst"])
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/items/{first.pk}/")
    page.keyboard.press("f")
    toast = page.locator("#undo-toast")
    toast.wait_for()
    screenshot(page, "triage-toast-1280")
    box = toast.bounding_box()
    buttons = page.locator("main button:visible, main a.button:visible")
    for index in range(buttons.count()):
        button = buttons.nth(index)
        if button.locator("xpath=ancestor::*[@id='undo-toast']").count():
            continue
        assert not overlaps(box, button.bounding_box()), button.inner_text()
    toast.wait_for(state="hidden", timeout=20_000)  # gone by itself, within seconds


def test_the_live_dashboard_never_sends_an_analyst_to_a_terminal(page, live_server, role_users):
    triage_item(probe_confirmed=True)
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/dashboard/")
    assert "manage.py" not in page.inner_text("main")
