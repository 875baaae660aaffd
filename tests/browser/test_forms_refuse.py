"""Forms refuse what cannot work, with the reason on the field and a summary at the top (issue 31 item 2)."""

import pytest

from judges.models import Backend, Judge
from judges.tests.calibration_builders import make_judge_version
from tests.browser.conftest import log_in, new_judge_submit, screenshot
from triage.models import TriagePolicy
from triage.policy import policy_publish

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def staff_admin(role_users):
    role_users["admin"].is_staff = True
    role_users["admin"].save(update_fields=["is_staff"])
    return role_users["admin"]


def test_the_policy_change_page_refuses_k_above_its_judges_starts_a_new_note_and_says_published_once(
    page, live_server, staff_admin
):
    judge = make_judge_version("live-checker", backend=Backend.VERIFIER)
    first = policy_publish(changes={}, judge_versions=[judge], note="why version 1 was made")
    log_in(page, live_server, "admin-user")
    page.goto(f"{live_server.url}/admin/triage/triagepolicy/{first.pk}/change/")
    assert page.input_value("#id_note") == ""  # the previous version's note is not carried over

    page.select_option("#id_flag_rule", "k_of_n")
    page.fill("#id_k", "9")
    page.fill("#id_note", "stricter")
    page.click("input[name=_save]")
    summary = page.locator("#error-summary")
    summary.wait_for()  # the summary at the top, naming the reason
    assert "k must be between 1 and 1" in summary.inner_text()
    assert "k" in page.inner_text(".field-k .errorlist") and "1" in page.inner_text(".field-k .errorlist")
    assert TriagePolicy.objects.count() == 1

    page.fill("#id_k", "1")
    page.click("input[name=_save]")
    page.wait_for_url(f"{live_server.url}/admin/triage/triagepolicy/")
    shown = page.locator("ul.messagelist li").all_inner_texts()
    assert len(shown) == 1 and "Published policy v2" in shown[0], shown
    assert TriagePolicy.objects.get(version=2).note == "stricter"
    screenshot(page, "policy-published-1280")


def test_a_base_url_a_non_admin_may_not_set_is_refused_at_the_top_naming_the_simulated_way(
    page, live_server, role_users
):
    log_in(page, live_server, "ml_engineer-user")
    summary = new_judge_submit(
        page,
        live_server,
        name="pointed-at-simulator",
        backend="anthropic",
        family="claude",
        model="claude-sim",
        config='{"base_url": "http://127.0.0.1:9/v1"}',
    )
    summary.wait_for()
    assert summary.bounding_box()["y"] < 600  # seen without scrolling, not 1,400 px down the page
    assert "only an admin" in summary.inner_text() and '{"simulated": true}' in summary.inner_text()
    assert '{"simulated": true}' in page.inner_text(".errorlist")
    assert not Judge.objects.filter(name="pointed-at-simulator").exists()
    screenshot(page, "judge-new-refused-1280")
