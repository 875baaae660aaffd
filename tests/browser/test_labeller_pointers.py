"""A labeller's label and undo confirm; the counts say for whom items wait and agree with the queue and
the gold-set list; disagreements lead to the item and name who may adjudicate; a labeller is told who
can import; an import of items without a warehouse warns (issue 31 item 5)."""

import re

import pytest

from labelling.models import Adjudication, QuerySource
from labelling.services import label_create
from labelling.tests import factories
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ADJUDICATORS = "admin-user, ml_engineer-user"  # who holds the permission among the role users


def item_on_screen(page) -> str:
    return page.locator("#queue-item .label-item[data-query]").get_attribute("data-query")


def progress(page) -> str:
    return page.locator("#queue-progress").inner_text()


def test_labels_and_an_undo_confirm_and_the_counts_agree_with_the_queue_and_the_list(page, live_server, role_users):
    gold_set = factories.gold_set(name="counts", overlap_share=1.0)  # every item wants a second labeller
    items = [factories.query(gold_set=gold_set, external_id=f"count-{n}") for n in range(3)]
    factories.query(external_id="audit-1", source=QuerySource.AUDIT)
    log_in(page, live_server, "labeller-user")
    page.goto(f"{live_server.url}/labelling/")
    row = page.locator("#gold-sets tbody tr", has_text="counts")
    assert row.locator("td.for-you").inner_text() == "3"
    assert "Audit samples that need your label: 1" in page.locator("#audit-for-you").inner_text()

    row.get_by_role("link", name="Label").click()
    # Until the page's deferred scripts have run, a key press is lost (nothing listens yet):
    # wait for the load event, not only for the queue's markup (CI lost the first "c" once).
    page.wait_for_url(re.compile(r"/labelling/queue/"), wait_until="load")
    page.locator("#queue-progress").wait_for()
    assert progress(page).startswith("4 items need your label (1 of them audit sample, shown first) · 3 in the set")
    flash = page.locator("#flash")
    for left in (3, 2, 1, 0):
        shown = item_on_screen(page)
        page.keyboard.press("c")
        if left:
            page.wait_for_function(
                "pk => document.querySelector('#queue-item .label-item')?.dataset.query !== pk", arg=shown
            )
            assert progress(page).startswith(f"{left} item{'s' if left != 1 else ''} need")
        else:
            page.get_by_text("Nothing left for you in this queue.").wait_for()
        assert "labelled correct. Press z to undo." in flash.inner_text()
    screenshot(page, "labeller-nothing-left-1280")
    # "Nothing left" and the count agree, and say why the set's items still wait: for someone else.
    assert progress(page).startswith("0 items need your label · 3 in the set · 3 labelled by you")
    assert "3 items you labelled still wait for another labeller's second label" in page.locator(".done").inner_text()

    page.keyboard.press("z")
    page.locator("#queue-item .label-item[data-query]").wait_for()
    undone = items[-1]
    assert f"Undone: your label correct of {undone.external_id} is withdrawn; label it again now." in flash.inner_text()
    assert item_on_screen(page) == str(undone.pk)
    # An item once labelled is never handed out again, even after an undo (the labeller has seen it),
    # so the count stays as the queue counts; the undone item is on screen to be labelled again.
    assert progress(page).startswith("0 items need your label · 3 in the set · 2 labelled by you")
    screenshot(page, "labeller-undone-1280")
    page.keyboard.press("w")
    page.keyboard.press("5")
    page.get_by_text("Nothing left for you in this queue.").wait_for()
    assert f"Saved: {undone.external_id} labelled wrong (missing_filter). Press z to undo." in flash.inner_text()

    page.goto(f"{live_server.url}/labelling/")
    assert page.locator("#gold-sets tbody tr", has_text="counts").locator("td.for-you").inner_text() == "0"


def test_a_key_pressed_before_the_new_item_settles_still_labels_in_place(page, live_server, role_users):
    """A fast labeller: the next key comes while htmx has not yet taken over the swapped-in item
    (its settle delay, stretched here to make the moment certain). The label is saved in place,
    with its confirmation, not by the browser submitting the button as a plain form."""
    gold_set = factories.gold_set(name="fast")
    items = {
        str(query.pk): query
        for query in (factories.query(gold_set=gold_set, external_id=f"fast-{n}") for n in range(2))
    }
    log_in(page, live_server, "labeller-user")
    page.goto(f"{live_server.url}/labelling/queue/fast/")
    page.evaluate("() => { htmx.config.defaultSettleDelay = 3000; }")
    page.evaluate("() => { window.sameDocument = true; }")  # gone if the page is loaded again
    first = item_on_screen(page)
    (second,) = (query for pk, query in items.items() if pk != first)
    page.keyboard.press("c")
    page.wait_for_function("pk => document.querySelector('#queue-item .label-item')?.dataset.query !== pk", arg=first)
    page.keyboard.press("c")  # within the settle delay
    page.get_by_text("Nothing left for you in this queue.").wait_for()
    assert page.evaluate("() => window.sameDocument === true")
    assert f"Saved: {second.external_id} labelled correct." in page.locator("#flash").inner_text()


def test_a_disagreement_leads_to_the_item_and_names_who_may_adjudicate(page, live_server, role_users):
    gold_set = factories.gold_set(name="argue", overlap_share=1.0)
    gold_set.reveal_labels_after_labelling = True
    gold_set.save(update_fields=["reveal_labels_after_labelling"])
    item = factories.query(gold_set=gold_set, external_id="argue-1", question="How many orders were cancelled?")
    label_create(query=item, labeller=None, decision="wrong", error_class="missing_filter", source="import")
    log_in(page, live_server, "labeller-user")
    page.goto(f"{live_server.url}/labelling/queue/argue/item/{item.pk}/")
    page.keyboard.press("c")
    # The label is saved once its confirmation shows; a page opened before that aborts the post.
    page.locator("#flash", has_text="labelled correct").wait_for()
    page.goto(f"{live_server.url}/labelling/queue/argue/item/{item.pk}/")
    note = page.locator("#disagreement")
    assert f"You and (import) disagree: awaiting an adjudicator. {ADJUDICATORS} may adjudicate." in note.inner_text()

    page.context.clear_cookies()
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/labelling/goldsets/argue/agreement/")
    row = page.locator("tr", has_text="argue-1")
    assert f"Awaiting an adjudicator: {ADJUDICATORS} may adjudicate." in row.inner_text()
    row.get_by_role("link", name="argue-1").click()
    page.get_by_role("heading", name="How many orders were cancelled?").wait_for()
    labels = page.locator("#item-labels").inner_text()
    assert "labeller-user: correct" in labels and "(import): wrong" in labels
    screenshot(page, "labelling-adjudication-1280")
    assert_no_sideways_scroll(page)
    page.select_option("#item-adjudication select[name=decision]", "wrong")
    page.select_option("#item-adjudication select[name=error_class]", "missing_filter")
    page.fill("#item-adjudication input[name=reason]", "cancelled orders are counted")
    page.click("#item-adjudication button.primary")
    page.get_by_text("Adjudicated argue-1.").wait_for()
    assert Adjudication.objects.get(query=item).reason == "cancelled orders are counted"

    page.context.clear_cookies()
    log_in(page, live_server, "labeller-user")
    page.goto(f"{live_server.url}/labelling/queue/argue/item/{item.pk}/")
    assert "Settled: ml_engineer-user adjudicated it wrong" in page.locator("#disagreement").inner_text()


def test_a_labeller_is_told_who_can_import(page, live_server, role_users):
    log_in(page, live_server, "labeller-user")
    page.goto(f"{live_server.url}/labelling/")
    assert f"ML engineers and admins do it: {ADJUDICATORS}." in page.locator("#import-pointer").inner_text()
    response = page.goto(f"{live_server.url}/labelling/import/")
    assert response.status == 403
    reason = page.locator("#error-reason").inner_text()
    assert "so ML engineers and admins import, not labellers" in reason
    assert f"Who can import: {ADJUDICATORS}." in reason
    screenshot(page, "labelling-import-refused-1280")


def test_an_import_of_items_without_a_warehouse_warns_on_the_page(page, live_server, role_users, tmp_path):
    csv = tmp_path / "no-warehouse.csv"
    csv.write_text("id,question,sql,label\nnw-1,How many?,SELECT 1,correct\nnw-2,How many more?,SELECT 2,correct\n")
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/labelling/import/")
    page.set_input_files("input[name=file]", str(csv))
    page.fill("input[name=gold_set]", "nowarehouse")
    page.click("#import-form button.primary")
    warning = page.locator("#import-warning")
    warning.wait_for()
    assert "2 new items name no warehouse, so no result preview is possible for them." in warning.inner_text()
    screenshot(page, "labelling-import-warning-1280")
