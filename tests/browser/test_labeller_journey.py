"""Journey 1: a labeller labels ten items with the keyboard alone, blind; only then do they see the
other labels of an item, and an ML engineer reads the agreement on the labels given blind."""

import re

import pytest

from labelling.goldset_io import goldset_import
from labelling.models import Label, LabelReveal, LabelSource
from labelling.services import goldset_set_overlap
from tests.browser.conftest import assert_no_sideways_scroll, demo_gold_slice, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GOLD_SET = "journey"
# What the labeller answers, item after item: (keys pressed, decision, error class).
ANSWERS = [
    (["c"], "correct", ""),
    (["w", "2"], "wrong", "join_fanout"),
    (["c"], "correct", ""),
    (["u"], "unsure", ""),
    (["w", "5"], "wrong", "missing_filter"),
    (["c"], "correct", ""),
    (["w", "4"], "wrong", "aggregation_grain"),
    (["c"], "correct", ""),
    (["w", "0"], "wrong", "other"),
    (["c"], "correct", ""),
]


@pytest.fixture
def gold_set_wanting_second_labels(tmp_path, demo_warehouse):
    """Import ten demo items (their imported labels are the first rater) and ask a second label on each.

    The gold set shows a labeller the other labels of an item once they have labelled it.
    """
    version = goldset_import(path_or_file=demo_gold_slice(tmp_path, count=10), gold_set_name=GOLD_SET, fmt="jsonl")
    gold_set = goldset_set_overlap(gold_set=version.gold_set, overlap_share=1.0)
    gold_set.reveal_labels_after_labelling = True
    gold_set.save(update_fields=["reveal_labels_after_labelling"])
    return gold_set


def current_item(page) -> tuple[str, str]:
    """Return (query pk, external id) of the item on screen."""
    item = page.locator("#queue-item .label-item[data-query]")
    return item.get_attribute("data-query"), item.locator(".label-head .muted").first.inner_text().split(" · ")[0]


def assert_keys_are_legible(page):
    """The key hint on the primary button must not be white on white."""
    colours = page.evaluate(
        """() => { const kbd = document.querySelector('#queue-item button.primary kbd');
                   const style = getComputedStyle(kbd); return [style.color, style.backgroundColor]; }"""
    )
    assert colours[0] != colours[1], colours


def test_a_labeller_labels_ten_items_blind_with_the_keyboard_and_the_engineer_sees_the_agreement(
    page, live_server, role_users, gold_set_wanting_second_labels
):
    log_in(page, live_server, "labeller-user")
    page.locator("header nav").get_by_role("link", name="Labelling").click()
    page.get_by_role("link", name=GOLD_SET, exact=True).click()
    page.get_by_role("link", name="Label items").click()
    # Keys pressed before the queue's deferred scripts have run are lost: wait for the load
    # event, as test_labeller_pointers does (CI lost a first key press there once).
    page.wait_for_url(re.compile(r"/labelling/queue/"), wait_until="load")

    labelled = {}
    for index, (keys, decision, error_class) in enumerate(ANSWERS):
        pk, external_id = current_item(page)
        if index == 0:
            assert_no_sideways_scroll(page)
            screenshot(page, "journey-labeller-queue")
            assert_keys_are_legible(page)
        assert page.locator("#other-labels").count() == 0, "no other label before one's own"
        classes = page.locator("#queue-item .error-classes")
        for key in keys:
            if key == "w":
                assert classes.is_hidden(), "the error classes show only after `w`"
            page.keyboard.press(key)
            if key == "w":
                assert classes.is_visible()
        labelled[int(pk)] = (external_id, decision, error_class)
        if index < len(ANSWERS) - 1:
            page.wait_for_function(
                "pk => document.querySelector('#queue-item .label-item')?.dataset.query !== pk", arg=pk
            )
    page.get_by_text("Nothing left for you in this queue.").wait_for()
    assert len(labelled) == 10

    # Back on an item they labelled, the labeller now sees the other label of it: the import's.
    last_pk = int(pk)
    page.goto(f"{live_server.url}/labelling/queue/{GOLD_SET}/item/{last_pk}/")
    other = page.locator("#other-labels")
    other.wait_for()
    assert "(import)" in other.inner_text() and "before you saw these" in other.inner_text()
    screenshot(page, "journey-labeller-other-labels")
    assert list(LabelReveal.objects.values_list("query_id", flat=True)) == [last_pk]
    page.goto(f"{live_server.url}/labelling/goldsets/{GOLD_SET}/")
    page.get_by_role("link", name="Label items").wait_for()
    assert page.get_by_role("link", name="Agreement").count() == 0  # agreement is the engineers' page

    page.context.clear_cookies()
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/labelling/goldsets/{GOLD_SET}/")
    page.get_by_role("link", name="Agreement").click()
    page.get_by_role("heading", name=f"Agreement · {GOLD_SET}").wait_for()
    assert "κ on 20 labels given blind; 0 excluded" in page.locator("#blind-agreement").inner_text()
    screenshot(page, "journey-labeller-agreement")
    pair = page.locator("table.data").first.locator("tbody tr").first
    assert pair.locator("td").nth(0).inner_text() == "(import)"
    assert pair.locator("td").nth(1).inner_text() == "labeller-user"
    assert pair.locator("td").nth(2).inner_text() == "10"

    mine = Label.objects.filter(labeller=role_users["labeller"], is_current=True, source=LabelSource.MANUAL)
    assert {label.query_id: (label.decision, label.error_class) for label in mine} == {
        pk: (decision, error_class) for pk, (_, decision, error_class) in labelled.items()
    }
