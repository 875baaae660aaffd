"""Labellers write an item's invariants on the queue page; bad ones are refused field by field."""

import json

import pytest
from django.urls import reverse

from labelling.models import GoldSet, Query

pytestmark = pytest.mark.django_db


@pytest.fixture
def item():
    gold_set = GoldSet.objects.create(name="inv")
    return Query.objects.create(gold_set=gold_set, external_id="q1", question="Revenue by status?", sql="SELECT 1")


def url(item):
    return reverse("labelling:query_invariants", args=[item.gold_set.name, item.pk])


def test_a_labeller_saves_invariants_on_the_item(client, role_users, item):
    client.force_login(role_users["labeller"])
    invariants = {"columns": 2, "values_in": {"status": ["completed"]}}
    response = client.post(url(item), {"invariants": json.dumps(invariants)})
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.invariants == invariants
    page = client.get(response["Location"]).content.decode()
    assert 'id="invariants"' in page and "completed" in page


def test_invalid_invariants_are_refused_with_each_field_named(client, role_users, item):
    client.force_login(role_users["labeller"])
    response = client.post(url(item), {"invariants": json.dumps({"rows": {"min": -1}, "band": 3})})
    assert response.status_code == 422
    page = response.content.decode()
    assert "rows.min: must be a non-negative integer" in page and "band: unknown invariant" in page
    item.refresh_from_db()
    assert item.invariants == {}


def test_an_empty_field_clears_the_invariants(client, role_users, item):
    item.invariants = {"columns": 1}
    item.save()
    client.force_login(role_users["labeller"])
    client.post(url(item), {"invariants": ""})
    item.refresh_from_db()
    assert item.invariants == {}


@pytest.mark.parametrize("who", ["analyst", "ml_engineer", "outsider"])
def test_only_labellers_write_invariants(client, role_users, item, who):
    client.force_login(role_users[who])
    assert client.post(url(item), {"invariants": '{"columns": 1}'}).status_code == 403


def test_writing_invariants_needs_a_post(client, role_users, item):
    client.force_login(role_users["labeller"])
    assert client.get(url(item)).status_code == 405
