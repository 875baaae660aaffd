import pytest

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_labeller_logs_in_and_sees_only_labelling(page, live_server, role_users):
    log_in(page, live_server, "labeller-user")
    nav = page.locator("header nav")
    assert nav.get_by_text("Labelling").is_visible()
    assert nav.get_by_text("Triage").count() == 0
    response = page.goto(f"{live_server.url}/triage/")
    assert response.status == 403


def test_static_assets_are_served_locally(page, live_server, role_users):
    log_in(page, live_server, "analyst-user")
    assert page.evaluate("typeof window.htmx") == "object"
