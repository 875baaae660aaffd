"""The import page in a real browser: a failed import says why and never says "Done."."""

import json

import pytest

from labelling.models import GoldSet, Query
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def upload(page, live_server, path, gold_set):
    page.goto(f"{live_server.url}/labelling/import/")
    page.set_input_files("input[name=file]", str(path))
    page.fill("input[name=gold_set]", gold_set)
    page.get_by_role("button", name="Import").click()


def test_an_empty_file_and_a_bad_gold_set_name_show_their_error_and_import_nothing(
    page, live_server, role_users, tmp_path
):
    log_in(page, live_server, "ml_engineer-user")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    upload(page, live_server, empty, "fresh")
    error = page.locator("#import-error")
    error.wait_for()
    assert "Nothing imported." in error.inner_text() and "empty" in error.inner_text()
    assert "Failed" in page.locator("#import-status").inner_text()
    assert "Done." not in page.locator("main").inner_text()
    assert page.locator("#import-progress").is_hidden()

    good = tmp_path / "gold.jsonl"
    good.write_text(json.dumps({"id": "b1", "question": "q", "sql": "SELECT 1", "label": "1"}) + "\n")
    upload(page, live_server, good, "not a slug!")
    page.locator("#import-error", has_text="letters, digits").wait_for()
    assert "Gold set:" in page.locator("#import-error").inner_text()
    assert "Done." not in page.locator("main").inner_text()
    assert not GoldSet.objects.exists() and not Query.objects.exists()

    upload(page, live_server, good, "browser-gold")
    page.locator("#import-done").wait_for()
    assert "1 new item" in page.locator("#import-result").inner_text()
    assert "Imported" in page.locator("#import-status").inner_text()
    assert Query.objects.filter(gold_set__name="browser-gold").count() == 1
