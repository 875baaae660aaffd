"""The gold-set version page (issue 31 item 5): SQL in a monospace font, ids on one line, and a
labeller filter that is a choice of who labelled the version, not free text matching nothing."""

import pytest

from judges.tests.calibration_builders import labels, make_gold_set
from labelling.models import GoldSetVersion
from labelling.services import label_create
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_version_page_shows_sql_monospaced_ids_unwrapped_and_labellers_to_choose(page, live_server, role_users):
    version = make_gold_set("browse", labels(2, 2))
    first = version.items.select_related("query").order_by("query__external_id").first().query
    first.external_id = "order-2024-11-30-customer-000123"
    first.save(update_fields=["external_id"])
    label_create(query=first, labeller=role_users["labeller"], decision="wrong", error_class="join_fanout")
    GoldSetVersion.objects.filter(pk=version.pk).update(is_frozen=True)  # published: the page shows frozen versions
    log_in(page, live_server, "ml_engineer-user")
    page.goto(f"{live_server.url}/labelling/goldsets/browse/v1/")
    options = page.locator("#id_labeller option").all_inner_texts()
    assert options == ["anyone", "labeller-user"]
    page.locator("#version-items details summary").first.click()
    font = page.locator("#version-items pre.sql").first.evaluate("el => getComputedStyle(el).fontFamily")
    assert "monospace" in font
    cell = page.locator("#version-items td.item-id code", has_text="order-2024-11-30-customer-000123")
    assert cell.bounding_box()["height"] < 30  # one line, not wrapped
    page.select_option("#id_labeller", "labeller-user")
    page.click("#browse-filters button.primary")
    assert page.locator("#version-items tbody tr").count() == 1
    screenshot(page, "version-browse-1280")
    assert_no_sideways_scroll(page)
