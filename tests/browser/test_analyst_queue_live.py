"""The analyst's queue refreshes by itself and says its order; every action confirms; "Give back" on
another analyst's claim says who holds it and until when; the resolved list filters and shows notes
(issue 31 item 5)."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from config.roles import ANALYST
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot
from triage.models import TriageItem, TriageStatus
from triage.queue import queue_order_sentence, triage_item_claim_next, triage_item_resolve
from triage.tests.factories import triage_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def queue_links(page) -> list[str]:
    return page.locator("#queue-live table.data tbody tr a").evaluate_all("links => links.map(a => a.pathname)")


def second_analyst(django_user_model):
    user = django_user_model.objects.create_user(username="analyst-two", password="pw-for-tests")
    user.groups.add(Group.objects.get(name=ANALYST))
    return user


def test_the_queue_refreshes_with_new_items_keeps_the_keyboard_place_and_says_its_order(page, live_server, role_users):
    judged = triage_item(judges_agreeing=3)
    older = triage_item(judges_agreeing=1)
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/")

    # The order is said in one line, and the rows follow it: more judges first, then the oldest.
    assert page.locator("#queue-order").inner_text().startswith(queue_order_sentence())
    assert queue_links(page) == [f"/triage/items/{judged.pk}/", f"/triage/items/{older.pk}/"]

    # The analyst's keyboard is on the second row when a probe-confirmed item arrives.
    focused = page.locator(f"#queue-live a[href='/triage/items/{older.pk}/']")
    focused.focus()
    arrived = triage_item(probe_confirmed=True)
    page.wait_for_function("() => document.querySelectorAll('#queue-live tbody tr a').length === 3", timeout=30_000)
    assert queue_links(page)[0] == f"/triage/items/{arrived.pk}/"  # confirmed by a probe: first
    assert "3 items waiting" in page.locator("#queue-count").inner_text()
    page.wait_for_function(
        "href => document.activeElement?.getAttribute('href') === href", arg=f"/triage/items/{older.pk}/", timeout=5_000
    )
    screenshot(page, "triage-queue-refreshed-1280")
    assert_no_sideways_scroll(page)

    # Shift+Tab still walks the rows from there, and `n` still claims the first item in the order said.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.activeElement.getAttribute('href')") == f"/triage/items/{judged.pk}/"
    with page.expect_navigation():
        page.keyboard.press("n")
    assert page.url.endswith(f"/triage/items/{arrived.pk}/")


def test_every_analyst_action_confirms_itself(page, live_server, role_users):
    first = triage_item(probe_confirmed=True)
    second = triage_item()
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/")
    messages = page.locator("ul.messages")

    with page.expect_navigation():
        page.keyboard.press("n")  # claim
    until = timezone.localtime(TriageItem.objects.get(pk=first.pk).claim_expires_at).strftime("%H:%M")
    assert f"Claimed item {first.pk}: it is yours until {until}." in messages.inner_text()

    with page.expect_navigation():
        page.keyboard.press("f")  # decide; the next item is claimed for the analyst
    assert f"Saved: item {first.pk} — false alarm" in page.locator("#undo-toast").inner_text()

    with page.expect_navigation():
        page.keyboard.press("z")  # undo
    assert f"Decision on item {first.pk} undone: it is yours to decide again." in messages.inner_text()
    assert TriageItem.objects.get(pk=second.pk).status == TriageStatus.OPEN

    page.get_by_role("button", name="Give back to the queue").click()  # give back
    page.get_by_role("heading", name="Triage queue").wait_for()
    assert f"Gave item {first.pk} back to the queue." in messages.inner_text()
    screenshot(page, "triage-gave-back-1280")


def test_give_back_on_another_analysts_claim_names_who_holds_it_and_until_when(
    page, live_server, role_users, django_user_model
):
    item = triage_item()
    other = second_analyst(django_user_model)
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/")
    with page.expect_navigation():
        page.keyboard.press("n")
    # While the page is open the claim lapses and the other analyst takes the item.
    until = timezone.now() + timedelta(minutes=12)
    TriageItem.objects.filter(pk=item.pk).update(assignee=other, claimed_at=timezone.now(), claim_expires_at=until)

    page.get_by_role("button", name="Give back to the queue").click()
    error = page.locator("ul.messages li.error")
    error.wait_for()
    hhmm = timezone.localtime(until).strftime("%H:%M")
    assert f"Item {item.pk} is claimed by analyst-two until {hhmm}: only they can give it back." in error.inner_text()
    assert page.url.endswith(f"/triage/items/{item.pk}/")
    assert f"analyst-two holds this item until {hhmm}" in page.locator("#claim-note").inner_text()
    assert TriageItem.objects.get(pk=item.pk).assignee_id == other.pk  # nothing was taken from them
    screenshot(page, "triage-give-back-refused-1280")


def test_the_resolved_list_filters_by_decision_class_analyst_and_date_and_shows_notes(
    page, live_server, role_users, django_user_model
):
    other = second_analyst(django_user_model)
    decided = {}
    for analyst, resolution, error_class, note, days_ago in (
        (role_users["analyst"], "confirmed_wrong", "join_fanout", "orders fan out over items", 0),
        (role_users["analyst"], "false_alarm", "", "the judge misread the filter", 0),
        (other, "confirmed_wrong", "missing_filter", "cancelled orders counted", 0),
        (other, "confirmed_wrong", "join_fanout", "old fan-out", 10),
    ):
        item = triage_item()
        triage_item_claim_next(analyst=analyst)
        triage_item_resolve(item_id=item.pk, analyst=analyst, resolution=resolution, error_class=error_class, note=note)
        TriageItem.objects.filter(pk=item.pk).update(resolved_at=timezone.now() - timedelta(days=days_ago))
        decided[note] = item
    log_in(page, live_server, "analyst-user")
    page.goto(f"{live_server.url}/triage/resolved/")

    def notes() -> set[str]:
        return set(page.locator("#resolved-items td.resolution-note").all_inner_texts())

    assert notes() == set(decided)  # every resolution's note is on the list
    page.select_option("#id_decision", "confirmed_wrong")
    page.select_option("#id_error_class", "join_fanout")
    page.click("#resolved-filters button[type=submit]")
    assert notes() == {"orders fan out over items", "old fan-out"}
    page.select_option("#id_analyst", label="analyst-two")
    page.click("#resolved-filters button[type=submit]")
    assert notes() == {"old fan-out"}
    week_ago = (timezone.localdate() - timedelta(days=7)).isoformat()
    page.fill("#id_since", week_ago)
    page.click("#resolved-filters button[type=submit]")
    assert "No resolved item matches these filters." in page.locator("#resolved-items").inner_text()
    page.goto(f"{live_server.url}/triage/resolved/?since={week_ago}&until={timezone.localdate().isoformat()}")
    assert notes() == {"orders fan out over items", "the judge misread the filter", "cancelled orders counted"}
    csv = page.request.get(f"{live_server.url}/triage/resolved.csv?since={week_ago}&decision=false_alarm").text()
    assert "the judge misread the filter" in csv and "orders fan out" not in csv  # the download keeps the filters
    screenshot(page, "triage-resolved-filtered-1280")
    assert_no_sideways_scroll(page)
