"""Every page, for every role, loads under the Content-Security-Policy without a violation.

The policy (config/settings_security.py) allows no inline script or style, no eval and no
other origin. A page that still carried an `onchange=`, a `style=""` or a `<style>` would
have it refused by the browser: Chromium reports each refusal as a `securitypolicyviolation`
event and a console message starting "Refused to". Both are collected on every page.
"""

import pytest

from tests.browser.conftest import log_in
from tests.browser.test_accessibility import pages_for, site  # noqa: F401 — `site` is a fixture

# What is tested is each page's markup, the same on either app database: CI runs it once, in the
# SQLite pass (conftest.py `ci_share_keeps`).
pytestmark = [pytest.mark.browser, pytest.mark.any_app_database, pytest.mark.django_db(transaction=True)]

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`
    + ` at ${event.sourceFile || ""}:${event.lineNumber || ""} ${event.sample || ""}`);
});
"""
ADMIN_PAGES = [
    "/admin/triage/apitoken/add/",
    "/admin/triage/triagepolicy/add/",
    "/admin/probes/warehouse/",
    "/admin/judges/judge/",
    "/admin/auth/user/",
    "/audit/",
]


def violations_on(page, url: str) -> list[str]:
    console = []
    page.on("console", lambda message: console.append(message.text) if "Refused to" in message.text else None)
    page.goto(url)
    page.wait_for_load_state("networkidle")  # htmx fragments loaded after the page (the queue's preview)
    return console + page.evaluate("window.__cspViolations")


def test_the_policy_is_sent_and_allows_no_inline_script_or_style(page, live_server):
    response = page.goto(f"{live_server.url}/accounts/login/")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


@pytest.mark.parametrize("role", ["anonymous", "labeller", "analyst", "ml_engineer", "admin"])
def test_every_page_of_a_role_loads_without_a_csp_violation(page, live_server, role_users, site, demo_warehouse, role):  # noqa: F811
    page.context.add_init_script(RECORD_VIOLATIONS)
    if role == "anonymous":
        paths = ["/accounts/login/", "/api/docs/", "/no-such-page/"]
    else:
        if role == "admin":
            role_users["admin"].is_staff = True
            role_users["admin"].save(update_fields=["is_staff"])
        log_in(page, live_server, f"{role}-user")
        paths = pages_for(role, site) + (
            [*ADMIN_PAGES, f"/admin/probes/warehouse/{demo_warehouse.pk}/change/"] if role == "admin" else []
        )
    problems = {}
    for path in paths:
        found = violations_on(page, f"{live_server.url}{path}")
        if found:
            problems[path] = found
    assert not problems, problems


def test_the_dashboards_version_selector_works_without_inline_script(page, live_server, role_users, site):  # noqa: F811
    page.context.add_init_script(RECORD_VIOLATIONS)
    log_in(page, live_server, "ml_engineer-user")
    version = site["version"]
    page.goto(f"{live_server.url}/judges/dashboard/{version.pk}/?runs={site['run'].pk}&generation_cost=0.01")
    page.select_option("#version-select", index=0)
    page.wait_for_url(f"{live_server.url}/judges/dashboard/{version.pk}/?generation_cost=0.01")
    assert page.evaluate("window.__cspViolations") == []
