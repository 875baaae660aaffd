"""Every page of every role passes axe-core's automated checks with no serious or critical violation.

axe-core is vendored under static/vendor/axe-core/ (the app and its tests work offline) and
injected into each page after it loads. Moderate and minor findings are not failures here.
"""

import pytest

from judges.models import Verdict
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from labelling.services import label_create
from tests.browser.conftest import log_in
from tests.browser.test_improving_a_judge import improving_site
from triage.models import IngestStatus
from triage.queue import triage_item_claim_next, triage_item_resolve
from triage.tests.factories import live_query, triage_item

# What is tested is each page's markup, the same on either app database: CI runs it once, in the
# SQLite pass (conftest.py `ci_share_keeps`).
pytestmark = [pytest.mark.browser, pytest.mark.any_app_database, pytest.mark.django_db(transaction=True)]
# Loaded from the app's own static files: the Content-Security-Policy refuses an inline script.
AXE = "/static/vendor/axe-core/axe.min.js"
BLOCKING = ("serious", "critical")
R, A = "reject", "accept"


@pytest.fixture
def site(role_users, demo_warehouse):
    """A little of everything each page shows: a measured gold set, judges, triage items, labels."""
    version = make_gold_set("axe", labels(3, 3))
    run = make_run(version)
    cheap = make_judge_version("cheap", price_input_per_mtok=1)
    keen = make_judge_version("keen", price_input_per_mtok=2)
    add_verdicts(run, cheap, [R, A, A, A, R, A], cost="0.001", latency=120)
    add_verdicts(run, keen, [R, R, R, A, A, R], cost="0.002", latency=300)
    make_judge_version("keen", number=2, price_input_per_mtok=2)
    item = version.items.select_related("query").first().query
    version.gold_set.reveal_labels_after_labelling = True  # the labeller's item page shows the other label
    version.gold_set.save(update_fields=["reveal_labels_after_labelling"])
    label_create(query=item, labeller=role_users["labeller"], decision="wrong", error_class="join_fanout")
    label_create(query=item, labeller=role_users["ml_engineer"], decision="correct")
    open_item = triage_item(probe_confirmed=True)
    done = triage_item()
    live_query(status=IngestStatus.FAILED)  # the unjudged page lists it with its requeue button
    analyst = role_users["analyst"]
    triage_item_claim_next(analyst=analyst)
    triage_item_resolve(item_id=open_item.pk, analyst=analyst, resolution="false_alarm")
    verdict = Verdict.objects.filter(run=run).first()
    return {"version": version, "run": run, "judge": keen.judge, "query": item, "item": done, "verdict": verdict}


def pages_for(role: str, site: dict) -> list[str]:
    version, run, judge, item = site["version"], site["run"], site["judge"], site["item"]
    labelling = [
        "/labelling/",
        "/labelling/goldsets/axe/",
        "/labelling/goldsets/axe/v1/",  # the blind view of a version
        "/labelling/queue/axe/",
        f"/labelling/queue/axe/item/{site['query'].pk}/",  # labelled: the other labels shown
        "/labelling/goldsets/axe/agreement/",  # a 403 for a labeller: agreement is the engineers'
    ]
    judges = [
        "/judges/",
        "/judges/new/",
        "/judges/runs/new/",
        f"/judges/runs/{run.pk}/",
        f"/judges/{judge.pk}/",
        f"/judges/{judge.pk}/edit/",
        f"/judges/{judge.pk}/compare/",
        f"/judges/dashboard/{version.pk}/",
        f"/judges/dashboard/{version.pk}/compare/",
        f"/judges/dashboard/{version.pk}/items/{site['query'].pk}/",
        f"/judges/verdicts/{site['verdict'].pk}/",
        "/loops/",
        "/labelling/goldsets/axe/v1/",
        "/labelling/goldsets/axe/agreement/",
        "/labelling/import/",
        f"/labelling/queries/{site['query'].pk}/adjudication/",  # the item, its labels, the adjudication form
        "/probes/",
        "/probes/demo/catalogue/",
    ]
    triage = ["/triage/", f"/triage/items/{item.pk}/", "/triage/resolved/", "/triage/unjudged/", "/triage/dashboard/"]
    errors = ["/no-such-page/", "/triage/next/"]  # a 404, and a 405 (a POST-only address opened)
    return {
        # /judges/ and /labelling/import/ are 403s for a labeller (the latter says who can import)
        "labeller": ["/", *labelling, "/judges/", "/labelling/import/", *errors],
        "analyst": ["/", *triage, "/api/docs/", *errors],
        "ml_engineer": ["/", *judges, *errors],
        "admin": [
            "/",
            "/labelling/",
            "/labelling/progress/",
            "/labelling/taxonomies/",
            "/labelling/taxonomies/docket/",
            "/admin/",
            "/admin/triage/livequery/",
            "/admin/labelling/goldsetversion/",
            "/admin/triage/triagepolicy/add/",  # the policy form with its 7-day preview
            "/audit/",
            "/probes/add/",
            "/probes/demo/catalogue/",  # an admin's: Test connection, Refresh catalogue, the role advice
            *errors,
        ],
    }[role]


def blocking_violations(page, base_url: str) -> list[str]:
    page.add_script_tag(url=f"{base_url}{AXE}")
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
             .map(v => ({id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"""
    )
    return [f"{v['id']} ({v['impact']}) at {v['targets']}" for v in found if v["impact"] in BLOCKING]


@pytest.mark.parametrize("role", ["labeller", "analyst", "ml_engineer", "admin"])
def test_every_page_of_a_role_has_no_serious_or_critical_axe_violation(page, live_server, role_users, site, role):
    if role == "admin":
        role_users["admin"].is_staff = True
        role_users["admin"].save(update_fields=["is_staff"])
    log_in(page, live_server, f"{role}-user")
    problems = {}
    for path in pages_for(role, site):
        page.goto(f"{live_server.url}{path}")
        violations = blocking_violations(page, live_server.url)
        if violations:
            problems[path] = violations
    assert not problems, problems


def test_the_pages_for_improving_a_judge_have_no_serious_or_critical_axe_violation(
    page, live_server, role_users, journey_simulator
):
    """Issue 30's pages on a split version: the dashboard's Split control and badges, Compare versions, the
    edit page with its candidates and a try's result, the version list and compare page with notes, and
    the gold set's thresholds form."""
    site = improving_site()
    version, tuned = site["version"], site["tuned"]
    fields = {name: getattr(tuned, name) for name in ("backend", "model", "family", "config")}
    make_judge_version("tuned", number=2, simulated=True, note="Shows it the fan-outs it missed", **fields)
    log_in(page, live_server, "ml_engineer-user")
    problems = {}
    for path in [
        f"/judges/dashboard/{version.pk}/?split=dev",
        f"/judges/dashboard/{version.pk}/compare/?split=dev",
        f"/judges/{tuned.judge_id}/edit/",
        f"/judges/{tuned.judge_id}/",
        f"/judges/{tuned.judge_id}/compare/",
        "/labelling/goldsets/improve/",
    ]:
        page.goto(f"{live_server.url}{path}")
        if violations := blocking_violations(page, live_server.url):
            problems[path] = violations
    page.goto(f"{live_server.url}/judges/{tuned.judge_id}/edit/")
    page.locator("#candidate-misses input[type=checkbox]").first.check()
    page.click("#try-button", timeout=90_000)  # the server's first vendor call imports the SDK
    page.locator("#try-result").wait_for()
    if violations := blocking_violations(page, live_server.url):
        problems["the edit page with a try's result"] = violations
    assert not problems, problems
