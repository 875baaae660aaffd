"""The analyst queue: useful order, atomic claims, expiry, decisions that become labels."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from labelling.models import Label, LabelSource
from tests.support.concurrency import run_concurrently
from triage.models import ResolutionEvent, TriageItem, TriageStatus
from triage.queue import triage_item_claim_next, triage_item_reopen, triage_item_resolve
from triage.selectors import queue_filter, queue_items
from triage.tests import factories


@pytest.mark.django_db
def test_the_queue_puts_probe_confirmed_first_then_agreement_then_age():
    old_one_judge = factories.triage_item(judges_agreeing=1)
    three_judges = factories.triage_item(judges_agreeing=3)
    new_one_judge = factories.triage_item(judges_agreeing=1)
    confirmed = factories.triage_item(probe_confirmed=True, judges_agreeing=0)
    order = [item.pk for item in queue_items(params={})]
    assert order == [confirmed.pk, three_judges.pk, old_one_judge.pk, new_one_judge.pk]


@pytest.mark.django_db
def test_items_past_the_sla_are_marked():
    factories.quiet_policy(sla_minutes=60)
    late = factories.triage_item()
    TriageItem.objects.filter(pk=late.pk).update(created_at=timezone.now() - timedelta(hours=2))
    fresh = factories.triage_item()
    marks = {item.pk: item.sla_breached for item in queue_items(params={})}
    assert marks == {late.pk: True, fresh.pk: False}


@pytest.mark.django_db
def test_filters_narrow_the_queue_by_warehouse_and_guess():
    other = factories.warehouse("other")
    mine = factories.triage_item(error_class_guess="join_fanout")
    factories.triage_item(wh=other, error_class_guess="join_fanout")
    factories.triage_item(error_class_guess="missing_filter")
    found = queue_items(params={"warehouse": "shop", "error_class": "join_fanout"})
    assert [item.pk for item in found] == [mine.pk]


@pytest.mark.django_db
def test_a_filter_value_the_form_refuses_filters_nothing_and_is_not_passed_on():
    mine = factories.triage_item(error_class_guess="join_fanout")
    params = {"warehouse": "shop", "judge": "not-a-number", "probe": "gremlins", "older_than": "0", "q": "  "}
    filters = queue_filter(params=params)
    assert [item.pk for item in filters.qs] == [mine.pk]
    assert filters.params() == {"warehouse": "shop"}, "links, the claim form and the download carry only valid filters"


@pytest.mark.django_db
def test_two_analysts_claiming_in_turn_get_different_items(role_users, django_user_model):
    factories.triage_item()
    factories.triage_item()
    second = django_user_model.objects.create_user("analyst-2")
    first_claim = triage_item_claim_next(analyst=role_users["analyst"])
    second_claim = triage_item_claim_next(analyst=second)
    assert first_claim.pk != second_claim.pk
    assert triage_item_claim_next(analyst=django_user_model.objects.create_user("analyst-3")) is None


@pytest.mark.django_db
def test_an_analyst_holding_a_claim_gets_it_back_first(role_users):
    factories.triage_item()
    factories.triage_item()
    held = triage_item_claim_next(analyst=role_users["analyst"])
    assert triage_item_claim_next(analyst=role_users["analyst"]).pk == held.pk


@pytest.mark.django_db
def test_an_expired_claim_returns_to_the_queue(role_users, django_user_model):
    item = factories.triage_item()
    triage_item_claim_next(analyst=role_users["analyst"])
    other = django_user_model.objects.create_user("analyst-2")
    assert triage_item_claim_next(analyst=other) is None
    TriageItem.objects.filter(pk=item.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    assert [i.pk for i in queue_items(params={})] == [item.pk]
    reclaimed = triage_item_claim_next(analyst=other)
    assert reclaimed.pk == item.pk and reclaimed.assignee == other
    with pytest.raises(PermissionDenied):
        triage_item_resolve(item_id=item.pk, analyst=role_users["analyst"], resolution="false_alarm")


@pytest.mark.parametrize(
    ("resolution", "error_class", "decision"),
    [("confirmed_wrong", "join_fanout", "wrong"), ("false_alarm", "", "correct"), ("unclear", "", "unsure")],
)
@pytest.mark.django_db
def test_every_decision_becomes_a_triage_label(role_users, resolution, error_class, decision):
    item = factories.triage_item()
    analyst = role_users["analyst"]
    triage_item_claim_next(analyst=analyst)
    label = triage_item_resolve(
        item_id=item.pk, analyst=analyst, resolution=resolution, error_class=error_class, note="n"
    )
    stored = Label.objects.get(pk=label.pk)
    assert (stored.query_id, stored.decision, stored.error_class) == (item.query_id, decision, error_class)
    assert stored.source == LabelSource.TRIAGE and stored.labeller == analyst and stored.is_current
    item.refresh_from_db()
    assert item.status == TriageStatus.RESOLVED and item.label_id == label.pk and item.time_spent_s >= 0


@pytest.mark.django_db
def test_confirmed_wrong_needs_an_error_class(role_users):
    item = factories.triage_item()
    triage_item_claim_next(analyst=role_users["analyst"])
    with pytest.raises(ValidationError):
        triage_item_resolve(item_id=item.pk, analyst=role_users["analyst"], resolution="confirmed_wrong")
    assert not Label.objects.exists()


@pytest.mark.django_db
def test_an_admin_reopens_a_resolved_item_keeping_its_history(role_users):
    item = factories.triage_item()
    analyst, admin = role_users["analyst"], role_users["admin"]
    triage_item_claim_next(analyst=analyst)
    label = triage_item_resolve(item_id=item.pk, analyst=analyst, resolution="false_alarm")
    with pytest.raises(PermissionDenied):
        triage_item_reopen(item_id=item.pk, admin=analyst)
    triage_item_reopen(item_id=item.pk, admin=admin, note="misclick")
    item.refresh_from_db()
    assert item.status == TriageStatus.OPEN and item.resolution == ""
    label.refresh_from_db()
    assert not label.is_current, "the reversed label stays as history, no longer current"
    assert list(item.events.values_list("action", flat=True)) == [
        ResolutionEvent.Action.RESOLVED,
        ResolutionEvent.Action.REOPENED,
    ]
    triage_item_claim_next(analyst=analyst)
    again = triage_item_resolve(item_id=item.pk, analyst=analyst, resolution="confirmed_wrong", error_class="other")
    assert Label.objects.filter(query=item.query).count() == 2 and again.is_current


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_claimers_never_get_the_same_item(django_user_model):
    """On PostgreSQL this exercises SKIP LOCKED; on SQLite, the conditional update.

    tests/fault/test_claim_soak.py is the time-bounded version with real resolutions.
    """
    for _ in range(30):
        factories.triage_item()
    analysts = [django_user_model.objects.create_user(f"claimer-{i}") for i in range(20)]

    def claim_repeatedly(analyst):
        mine = []
        for _ in range(3):
            item = triage_item_claim_next(analyst=analyst)
            if item is None:
                break
            mine.append(item.pk)
            # Hand it on as resolved-by-release so the next loop claims a new one.
            TriageItem.objects.filter(pk=item.pk).update(status=TriageStatus.RESOLVED, resolution="unclear")
        return mine

    claims = run_concurrently(claim_repeatedly, [(analyst,) for analyst in analysts])
    all_claims = [pk for mine in claims for pk in mine]
    assert len(all_claims) == len(set(all_claims)) == 30
