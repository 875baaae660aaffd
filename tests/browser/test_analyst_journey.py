"""Journey 3: live queries arrive through the API, an analyst claims, reads the probe, resolves three."""

import re
from decimal import Decimal

import pytest

from judges.services import judge_create
from labelling.models import Label, LabelSource
from probes.models import ProbeRun
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot
from tests.support.fixtures import wait_for
from triage.models import TriageItem, TriageStatus
from triage.policy import policy_publish
from triage.tokens import api_token_issue

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SURE = {"simulated": True, "concurrency": 4, "timeout_s": 5, "retry_base_delay_s": 0.01}
# Five live queries, each flagged for a different reason: a real fan-out on the demo
# warehouse (the probe confirms it), an unknown column (the verifier), and three the
# simulated judges reject (their `sim:` markers tell the simulator the truth).
LIVE_QUERIES = [
    {
        "external_id": "live-fanout",
        "question": "Show completed revenue per month in 2024 for orders with at least one line item.",
        "sql": "SELECT SUBSTR(CAST(o.order_date AS TEXT), 1, 7) AS month, SUM(o.order_total) AS revenue "
        "FROM orders o JOIN order_items oi ON oi.order_id = o.order_id WHERE o.status = 'completed' "
        "AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01' GROUP BY 1",
    },
    {
        "external_id": "live-unknown-column",
        "question": "What is the completed revenue?",
        "sql": "SELECT SUM(o.revenue) AS revenue FROM orders o WHERE o.status = 'completed'",
    },
    {
        "external_id": "live-missing-filter",
        "question": "How many completed orders are there?",
        "sql": "SELECT COUNT(*) AS orders FROM orders o -- sim: wrong missing_filter",
    },
    {
        "external_id": "live-misread",
        "question": "How many customers have a region?",
        "sql": "SELECT COUNT(DISTINCT o.customer_id) AS customers FROM orders o -- sim: wrong misread_intent",
    },
    {
        "external_id": "live-grain",
        "question": "How many products are in each category?",
        "sql": "SELECT COUNT(*) AS products FROM products p -- sim: wrong aggregation_grain",
    },
]


@pytest.fixture
def live_policy(journey_simulator, demo_warehouse):
    """Two simulated judges that reject exactly what the simulator knows to be wrong, on live traffic."""
    versions = [
        judge_create(
            name=f"{backend}-live",
            backend=backend,
            family="simulated",
            model="sim-journey-sure",
            price_input_per_mtok=Decimal("1"),
            config=SURE,
            is_simulated=True,
        ).latest_version
        for backend in ("anthropic", "openai_compatible")
    ]
    return policy_publish(changes={"flag_rule": "any", "audit_share": 0.0}, judge_versions=versions)


def queue_rows(page):
    return page.locator("table.data tbody tr:has(a)")


def external_id_on(page) -> str:
    return page.locator("main p.muted code").first.inner_text()


def test_an_analyst_sees_live_queries_arrive_claims_one_and_resolves_three(
    page, live_server, role_users, live_policy, journey_worker
):
    _, token = api_token_issue(client="journey-client", scopes=["ingest", "read"])
    headers = {"Authorization": f"Bearer {token}"}
    status_urls = {}
    for row in LIVE_QUERIES:
        response = page.request.post(
            f"{live_server.url}/api/v1/queries", data={**row, "warehouse": "demo"}, headers=headers
        )
        assert response.status == 202, response.text()
        status_urls[row["external_id"]] = response.json()["status_url"]

    log_in(page, live_server, "analyst-user")
    page.locator("header nav").get_by_role("link", name="Triage").click()

    def five_in_queue():
        page.reload()
        return queue_rows(page).count() == len(LIVE_QUERIES)

    wait_for(
        five_in_queue,
        timeout=60,
        interval=1,
        what=f"five flagged items (worker log: {journey_worker.output()[-2000:]})",
    )
    for external_id, url in status_urls.items():
        assert page.request.get(url, headers=headers).json()["status"] == "flagged", external_id
    assert_no_sideways_scroll(page)
    screenshot(page, "journey-analyst-queue")

    # `n` claims the most useful item: the one a probe confirmed.
    with page.expect_navigation():
        page.keyboard.press("n")
    assert external_id_on(page) == "live-fanout"
    probe = ProbeRun.objects.get(kind="fanout", outcome="confirmed")
    figures = probe.figures
    total, distinct = figures["total_rows"], figures["distinct_keys"]
    sentence = f"order_items fans out orders.order_id: {total} rows for {distinct} distinct keys"
    probes_card = page.locator("section.card", has=page.get_by_role("heading", name="Probes"))
    assert sentence in probes_card.inner_text()
    assert probes_card.locator(".badge.bad").first.inner_text() == "confirmed"
    assert_no_sideways_scroll(page)
    screenshot(page, "journey-analyst-item")

    # Resolve three with the keyboard; each decision opens the next claimed item.
    decisions = {}
    for keys, resolution, label in (
        (["w"], "confirmed_wrong", ("wrong", "join_fanout")),  # the probe's guess is preselected
        (["f"], "false_alarm", ("correct", "")),
        (["5", "w"], "confirmed_wrong", ("wrong", "missing_filter")),
    ):
        item_pk = int(re.search(r"/items/(\d+)/", page.url).group(1))
        decisions[item_pk] = (resolution, label)
        for key in keys[:-1]:
            page.keyboard.press(key)
        with page.expect_navigation():
            page.keyboard.press(keys[-1])
    page.get_by_role("button", name="Give back to the queue").click()
    page.get_by_role("heading", name="Triage queue").wait_for()
    assert queue_rows(page).count() == len(LIVE_QUERIES) - 3

    resolved = TriageItem.objects.filter(status=TriageStatus.RESOLVED)
    assert {item.pk: item.resolution for item in resolved} == {pk: r for pk, (r, _) in decisions.items()}
    labels = Label.objects.filter(source=LabelSource.TRIAGE, labeller=role_users["analyst"], is_current=True)
    assert labels.count() == 3
    by_query = {label.query_id: (label.decision, label.error_class) for label in labels}
    assert by_query == {TriageItem.objects.get(pk=pk).query_id: label for pk, (_, label) in decisions.items()}
