"""The analyst's short undo and the queue's search, filters, counts and pagination (#21)."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from labelling.models import Label
from triage.models import TriageItem, TriageStatus
from triage.queue import triage_item_claim_next, triage_item_resolve
from triage.selectors import QUEUE_PAGE_SIZE
from triage.tests.factories import triage_item
from triage.undo import UNDO_WINDOW, triage_item_undo_resolve

pytestmark = pytest.mark.django_db


def decide(client, item, resolution="false_alarm"):
    return client.post(reverse("triage:decide", args=[item.pk]), {"resolution": resolution})


def claimed_by(user, **extra):
    item = triage_item(**extra)
    assert triage_item_claim_next(analyst=user) == item
    return item


def test_deciding_shows_a_saved_toast_with_an_undo_on_the_next_page(client_for, role_users):
    client = client_for("analyst")
    item = claimed_by(role_users["analyst"])
    triage_item(judges_agreeing=0)  # the next item the decision moves the analyst on to
    page = client.get(decide(client, item).url)
    assert b'id="undo-toast"' in page.content
    assert f"Saved: item {item.pk}".encode() in page.content
    assert reverse("triage:undo", args=[item.pk]).encode() in page.content
    # Shown once: reloading the page does not offer it again.
    assert b'id="undo-toast"' not in client.get(page.wsgi_request.path).content


def test_undo_gives_the_item_back_to_its_resolver_and_retracts_the_label(client_for, role_users):
    analyst = role_users["analyst"]
    client = client_for("analyst")
    item = claimed_by(analyst)
    moved_on_to = triage_item(judges_agreeing=0)
    decide(client, item, "false_alarm")
    assert TriageItem.objects.get(pk=moved_on_to.pk).assignee == analyst

    response = client.post(reverse("triage:undo", args=[item.pk]))

    assert response.url == reverse("triage:item", args=[item.pk])
    item.refresh_from_db()
    assert item.status == TriageStatus.CLAIMED and item.assignee == analyst and item.resolution == ""
    assert not Label.objects.filter(query=item.query, is_current=True).exists()
    assert TriageItem.objects.get(pk=moved_on_to.pk).status == TriageStatus.OPEN
    assert list(item.events.values_list("action", flat=True)) == ["resolved", "reopened"]


def test_only_the_resolver_can_undo(role_users):
    item = claimed_by(role_users["analyst"])
    triage_item_resolve(item_id=item.pk, analyst=role_users["analyst"], resolution="false_alarm")
    with pytest.raises(PermissionDenied):
        triage_item_undo_resolve(item_id=item.pk, analyst=role_users["admin"])


def test_undo_is_refused_after_its_window(role_users):
    item = claimed_by(role_users["analyst"])
    triage_item_resolve(item_id=item.pk, analyst=role_users["analyst"], resolution="false_alarm")
    TriageItem.objects.filter(pk=item.pk).update(resolved_at=timezone.now() - UNDO_WINDOW - timedelta(seconds=1))
    with pytest.raises(ValidationError):
        triage_item_undo_resolve(item_id=item.pk, analyst=role_users["analyst"])


def test_undo_is_post_only(client_for):
    item = triage_item()
    assert client_for("analyst").get(reverse("triage:undo", args=[item.pk])).status_code == 405


def test_the_queue_searches_question_sql_and_external_id(client_for):
    wanted = triage_item()
    wanted.query.question = "Revenue by flamingo colour"
    wanted.query.save()
    other = triage_item()
    page = client_for("analyst").get(reverse("triage:index"), {"q": "flamingo"})
    shown = [item.pk for item in page.context["page"]]
    assert shown == [wanted.pk] and other.pk not in shown
    assert b"<strong>1</strong> of 2 waiting items match" in page.content


def test_the_queue_filters_by_probe_outcome(client_for):
    confirmed = triage_item(probe_confirmed=True)
    verifier = triage_item(verifier_failed=True)
    plain = triage_item()
    client = client_for("analyst")

    def shown(probe):
        return [item.pk for item in client.get(reverse("triage:index"), {"probe": probe}).context["page"]]

    assert shown("confirmed") == [confirmed.pk]
    assert shown("verifier") == [verifier.pk]
    assert shown("none") == [plain.pk]


def test_the_queue_pages_and_keeps_its_filters_in_the_page_links(client_for):
    for _ in range(QUEUE_PAGE_SIZE + 2):
        triage_item(probe_confirmed=True)
    client = client_for("analyst")
    first = client.get(reverse("triage:index"), {"probe": "confirmed"})
    assert len(first.context["page"]) == QUEUE_PAGE_SIZE
    assert b"Page 1 of 2" in first.content
    assert b'href="?probe=confirmed&amp;page=2"' in first.content
    second = client.get(reverse("triage:index"), {"probe": "confirmed", "page": 2})
    assert len(second.context["page"]) == 2


def test_claiming_next_respects_the_search(client_for):
    triage_item(probe_confirmed=True)
    wanted = triage_item()
    wanted.query.question = "Only the pelican one"
    wanted.query.save()
    response = client_for("analyst").post(reverse("triage:claim_next"), {"q": "pelican"})
    assert response.url == reverse("triage:item", args=[wanted.pk])
