"""The triage policy's change page previews what the draft would have flagged over the last 7 days, and
refuses a judge that cannot judge live traffic with the reason on the field and at the top (issue 31 item 2).

The live queries are judged by the real pipeline with two ladder judges on the demo warehouse (no
vendor): the preview re-decides what the pipeline stored, and calls nothing.
"""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from judges.models import Backend, Verdict
from judges.tests.calibration_builders import make_judge_version
from labelling.models import Query, QuerySource
from tests.browser.conftest import log_in, screenshot
from triage.models import IngestStatus, LiveQuery, TriagePolicy
from triage.pipeline import live_query_process
from triage.policy import policy_publish

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SQL = {
    "fine": "SELECT COUNT(*) AS n FROM orders",
    "empty": "SELECT order_id FROM orders WHERE order_id < 0",  # parses and runs, but returns nothing
    "broken": "SELEC order_id FROM orders",  # every rung rejects it
}


@pytest.fixture
def judged_week(role_users, demo_warehouse):
    """Two ladder judges, a policy flagging on any reject, and live queries the pipeline judged."""
    role_users["admin"].is_staff = True
    role_users["admin"].save(update_fields=["is_staff"])
    parse = make_judge_version("rung-parse", backend=Backend.LADDER, config={"rung": "parse"})
    non_empty = make_judge_version("rung-non-empty", backend=Backend.LADDER, config={"rung": "non_empty"})
    policy = policy_publish(
        changes={"flag_rule": "any", "run_verifier": False, "run_fanout_detector": False, "audit_share": 0.0},
        judge_versions=[parse, non_empty],
        note="any reject flags",
    )
    lives = {}
    for name, sql in [*SQL.items(), ("old", SQL["broken"])]:
        query = Query.objects.create(
            question=f"The {name} one", sql=sql, dialect="sqlite", warehouse=demo_warehouse, source=QuerySource.LIVE
        )
        lives[name] = LiveQuery.objects.create(query=query, policy=policy)
        live_query_process(live_id=query.pk)
    # One judged ten days ago: outside the window.
    LiveQuery.objects.filter(pk=lives["old"].pk).update(finished_at=timezone.now() - timedelta(days=10))
    statuses = {name: LiveQuery.objects.get(pk=live.pk).status for name, live in lives.items()}
    assert statuses == {
        "fine": IngestStatus.PASSED,
        "empty": IngestStatus.FLAGGED,
        "broken": IngestStatus.FLAGGED,
        "old": IngestStatus.FLAGGED,
    }
    return {"policy": policy, "parse": parse, "non_empty": non_empty}


def figure(page, name: str) -> str:
    return page.inner_text(f"#policy-preview [data-figure={name}]")


def test_the_change_page_previews_what_the_draft_would_have_flagged_in_the_last_7_days(page, live_server, judged_week):
    verdicts_before = Verdict.objects.count()
    log_in(page, live_server, "admin-user")
    page.goto(f"{live_server.url}/admin/triage/triagepolicy/{judged_week['policy'].pk}/change/")
    # On load: the policy as it stands flags what it flagged (the old query is outside the week).
    page.locator("#policy-preview [data-figure=would_flag]").wait_for()
    assert (figure(page, "flagged_now"), figure(page, "would_flag")) == ("2", "2")
    assert "of 3 live queries decided in the last 7 days" in page.inner_text("#policy-preview")

    # A majority of the two judges needs both: the empty result (one reject) would no longer be flagged.
    page.select_option("#id_flag_rule", "majority")
    expect(page.locator("#policy-preview [data-figure=would_flag]")).to_have_text("1")
    assert (figure(page, "flagged_now"), figure(page, "no_longer_flagged")) == ("2", "1")
    examples = page.inner_text("#preview-no-longer-flagged")
    assert "The empty one" in examples and "1 of 2 judges rejected" in examples
    screenshot(page, "policy-preview-1280")

    # Without the stricter judge, the empty result passes under "any" too.
    page.select_option("#id_flag_rule", "any")
    expect(page.locator("#policy-preview [data-figure=would_flag]")).to_have_text("2")
    page.uncheck(f"input[name=judge_versions][value='{judged_week['non_empty'].pk}']")
    expect(page.locator("#policy-preview [data-figure=would_flag]")).to_have_text("1")
    assert "The empty one" in page.inner_text("#preview-no-longer-flagged")

    assert Verdict.objects.count() == verdicts_before  # no judge was called
    assert TriagePolicy.objects.count() == 1  # and nothing published


def test_a_judge_that_cannot_judge_live_traffic_is_refused_on_the_field_and_at_the_top(
    page, live_server, judged_week, settings
):
    settings.ANTHROPIC_API_KEY = ""
    keyless = make_judge_version("keyless-claude", backend=Backend.ANTHROPIC, model="claude-sonnet-4-5")
    replayed = make_judge_version("imported-judge", backend=Backend.REPLAY)
    log_in(page, live_server, "admin-user")
    page.goto(f"{live_server.url}/admin/triage/triagepolicy/{judged_week['policy'].pk}/change/")
    for version in (keyless, replayed):
        page.check(f"input[name=judge_versions][value='{version.pk}']")
    page.fill("#id_note", "add two more judges")
    page.click("input[name=_save]")
    summary = page.locator("#error-summary")
    summary.wait_for()
    assert summary.bounding_box()["y"] < 400  # at the top, seen without scrolling
    top = summary.inner_text()
    assert "keyless-claude v1 cannot judge live traffic: ANTHROPIC_API_KEY is not set here" in top
    assert "imported-judge v1 cannot judge live traffic: it replays verdicts imported" in top
    on_field = page.inner_text(".field-judge_versions .errorlist")
    assert "ANTHROPIC_API_KEY" in on_field and "imported-judge v1" in on_field
    assert TriagePolicy.objects.count() == 1
    page.locator("#preview-refused").wait_for()  # the preview waits for a policy that could be published
    screenshot(page, "policy-refused-judges-1280")
