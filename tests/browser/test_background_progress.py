"""Long work off the request, in a real browser with a real worker (issue 33): publishing a gold set
returns at once, the version page shows the audit's progress bar, then its findings without a reload
by hand; the triage dashboard's "Compute it now" does the same for the monitoring pass."""

import pytest

from labelling.models import GoldSetAudit
from labelling.tests.test_audit_pages import gold_set_with_an_empty_reference
from tests.browser.conftest import log_in
from triage.models import EstimateSnapshot, MonitorPass
from triage.policy import policy_publish
from triage.tests.factories import judge_version, live_query

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_publishing_shows_the_audits_progress_then_its_findings(
    page, live_server, role_users, demo_warehouse, journey_worker
):
    gold_set_with_an_empty_reference(demo_warehouse)
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/labelling/goldsets/paged/")
    page.locator("form[action$='/publish/'] button.primary").click()
    page.wait_for_url(f"{live_server.url}/labelling/goldsets/paged/v1/")
    assert GoldSetAudit.objects.count() == 1
    # The page polls the audit's progress and reloads itself when it ends: the findings appear.
    page.locator("#audit td", has_text="empty_reference").wait_for(timeout=120_000)
    assert "1 warning" in page.locator("#audit").inner_text()
    assert page.locator("#audit-progress").count() == 0


def test_compute_it_now_shows_the_passs_progress_then_the_estimates(page, live_server, role_users, journey_worker):
    version = judge_version()
    policy_publish(changes={"run_verifier": False, "run_fanout_detector": False}, judge_versions=[version])
    live_query()
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/triage/dashboard/")
    page.click("#monitor-now")
    page.wait_for_url(f"{live_server.url}/triage/dashboard/")
    assert MonitorPass.objects.count() == 1
    page.locator("#monitor-pass", has_text="Estimated the live error rate for 1 judge(s).").wait_for(timeout=120_000)
    assert page.locator("#no-estimate").count() == 0
    assert EstimateSnapshot.objects.filter(judge_version=version).count() == 1
