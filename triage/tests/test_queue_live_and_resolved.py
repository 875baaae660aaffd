"""The queue's live list and its order sentence, the refused give-back, the resolved list's filters."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from tests.support.access import admitted, denied
from triage.filters import ResolvedFilter
from triage.models import TriageItem, TriageStatus
from triage.queue import (
    QUEUE_ORDER,
    QUEUE_ORDER_WORDS,
    queue_order_sentence,
    triage_item_claim_next,
    triage_item_release,
    triage_item_resolve,
)
from triage.selectors import resolved_queryset
from triage.tests.factories import triage_item

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_order_sentence_says_every_key_of_the_claim_order_in_its_place():
    assert list(QUEUE_ORDER_WORDS) == list(QUEUE_ORDER)
    sentence = queue_order_sentence()
    positions = [sentence.index(QUEUE_ORDER_WORDS[field]) for field in QUEUE_ORDER]
    assert positions == sorted(positions)


def test_claims_follow_the_order_the_sentence_says(role_users):
    old_one_judge = triage_item(judges_agreeing=1)
    three_judges = triage_item(judges_agreeing=3)
    confirmed = triage_item(probe_confirmed=True, judges_agreeing=1)
    new_one_judge = triage_item(judges_agreeing=1)
    TriageItem.objects.filter(pk=new_one_judge.pk).update(created_at=timezone.now() + timedelta(minutes=1))
    claimed = []
    for _ in range(4):
        item = triage_item_claim_next(analyst=role_users["analyst"])
        claimed.append(item.pk)
        triage_item_resolve(item_id=item.pk, analyst=role_users["analyst"], resolution="unclear")
    assert claimed == [confirmed.pk, three_judges.pk, old_one_judge.pk, new_one_judge.pk]


def test_the_poll_gets_only_the_list_with_the_filters_kept(client_for):
    triage_item(probe_confirmed=True)
    response = client_for("analyst").get(reverse("triage:index") + "?probe=confirmed", **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="queue-live"') and "<html" not in html
    assert 'hx-get="/triage/?probe=confirmed"' in html
    assert "<strong>1</strong> of 1 waiting item match" in html


@pytest.mark.parametrize("who", ["labeller", "ml_engineer", "outsider"])
def test_the_poll_is_refused_to_who_may_not_see_the_queue(client_for, who):
    assert denied(client_for(who).get(reverse("triage:index"), **HTMX))


def test_the_poll_sends_an_anonymous_visitor_to_login(client):
    assert denied(client.get(reverse("triage:index"), **HTMX))


def test_giving_back_another_analysts_claim_names_the_holder_and_the_time(role_users, django_user_model):
    item = triage_item()
    other = django_user_model.objects.create_user(username="analyst-two")
    triage_item_claim_next(analyst=other)
    until = TriageItem.objects.get(pk=item.pk).claim_expires_at
    with pytest.raises(ValidationError) as refused:
        triage_item_release(item=item, analyst=role_users["analyst"])
    hhmm = timezone.localtime(until).strftime("%H:%M")
    assert f"claimed by analyst-two until {hhmm}: only they can give it back" in refused.value.messages[0]
    assert TriageItem.objects.get(pk=item.pk).assignee_id == other.pk


def test_giving_back_an_unclaimed_or_resolved_item_says_so(role_users):
    item = triage_item()
    with pytest.raises(ValidationError, match="not claimed by anyone: it is already in the queue"):
        triage_item_release(item=item, analyst=role_users["analyst"])
    triage_item_claim_next(analyst=role_users["analyst"])
    triage_item_resolve(item_id=item.pk, analyst=role_users["analyst"], resolution="unclear")
    with pytest.raises(ValidationError, match="already resolved"):
        triage_item_release(item=item, analyst=role_users["analyst"])


def test_the_release_view_shows_the_refusal_and_keeps_the_analyst_on_the_item(client_for, django_user_model):
    item = triage_item()
    triage_item_claim_next(analyst=django_user_model.objects.create_user(username="analyst-two"))
    client = client_for("analyst")
    response = client.post(reverse("triage:release", args=[item.pk]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("triage:item", args=[item.pk])
    assert "claimed by analyst-two until" in response.content.decode()


def test_giving_back_ones_own_claim_confirms(client_for, role_users):
    item = triage_item()
    triage_item_claim_next(analyst=role_users["analyst"])
    response = client_for("analyst").post(reverse("triage:release", args=[item.pk]), follow=True)
    assert f"Gave item {item.pk} back to the queue." in response.content.decode()
    assert TriageItem.objects.get(pk=item.pk).status == TriageStatus.OPEN


def _resolved(analyst, resolution, error_class="", note="", days_ago=0):
    item = triage_item()
    triage_item_claim_next(analyst=analyst)
    triage_item_resolve(item_id=item.pk, analyst=analyst, resolution=resolution, error_class=error_class, note=note)
    TriageItem.objects.filter(pk=item.pk).update(resolved_at=timezone.now() - timedelta(days=days_ago))
    return item


def test_the_resolved_filters_keep_what_they_say(role_users, django_user_model):
    analyst, other = role_users["analyst"], django_user_model.objects.create_user(username="analyst-two")
    fanout = _resolved(analyst, "confirmed_wrong", "join_fanout", "fans out")
    alarm = _resolved(analyst, "false_alarm", note="fine")
    filter_missing = _resolved(other, "confirmed_wrong", "missing_filter", days_ago=3)
    old = _resolved(other, "unclear", days_ago=30)

    def kept(**data):
        return set(ResolvedFilter(data, queryset=resolved_queryset()).qs.values_list("pk", flat=True))

    assert kept() == {fanout.pk, alarm.pk, filter_missing.pk, old.pk}
    assert kept(decision="confirmed_wrong") == {fanout.pk, filter_missing.pk}
    assert kept(error_class="join_fanout") == {fanout.pk}
    assert kept(analyst=str(other.pk)) == {filter_missing.pk, old.pk}
    today = timezone.localdate()
    assert kept(since=(today - timedelta(days=7)).isoformat()) == {fanout.pk, alarm.pk, filter_missing.pk}
    assert kept(until=(today - timedelta(days=1)).isoformat()) == {filter_missing.pk, old.pk}
    analysts = ResolvedFilter({}, queryset=resolved_queryset()).form.fields["analyst"].queryset
    assert [user.username for user in analysts] == ["analyst-two", "analyst-user"]  # who resolved, not everyone


def test_the_resolved_page_shows_each_note_and_its_filters(client_for, role_users):
    _resolved(role_users["analyst"], "false_alarm", note="the judge misread the filter")
    response = client_for("analyst").get(reverse("triage:resolved") + "?decision=false_alarm")
    html = response.content.decode()
    assert "the judge misread the filter" in html and 'id="resolved-filters"' in html
    assert admitted(response)


@pytest.mark.parametrize("who", ["labeller", "ml_engineer", "outsider"])
def test_the_filtered_resolved_page_and_download_are_refused_to_others(client_for, who):
    client = client_for(who)
    assert denied(client.get(reverse("triage:resolved") + "?decision=false_alarm"))
    assert denied(client.get(reverse("triage:resolved_export", args=["csv"]) + "?decision=false_alarm"))
