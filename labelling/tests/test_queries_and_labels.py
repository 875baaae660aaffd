import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from labelling.models import Adjudication, Label, LabelSource, Query, QuerySource
from labelling.services import label_create, label_undo, query_create
from labelling.tests import factories
from probes.fingerprint import sql_fingerprint
from probes.models import Warehouse

pytestmark = pytest.mark.django_db


def test_query_create_stores_the_normalised_fingerprint():
    a = factories.query(sql="select o.id from orders o where o.total > 5")
    b = factories.query(sql="SELECT  x.ID\nFROM Orders AS x WHERE x.total>5")
    assert a.fingerprint == sql_fingerprint("select o.id from orders o where o.total > 5", "sqlite")
    assert a.fingerprint == b.fingerprint
    assert factories.query(sql="SELECT o.id FROM orders o WHERE o.total > 6").fingerprint != a.fingerprint


def test_query_create_takes_the_dialect_from_the_warehouse():
    warehouse = Warehouse.objects.create(name="pg", dialect="postgres")
    query = query_create(question="q", sql="SELECT 1", external_id="x", warehouse=warehouse, source=QuerySource.LIVE)
    assert query.dialect == "postgres"


def test_a_new_label_supersedes_the_labellers_current_one_and_keeps_history(role_users):
    query = factories.query()
    alice = role_users["labeller"]
    first = label_create(query=query, labeller=alice, decision="correct")
    second = label_create(query=query, labeller=alice, decision="wrong", error_class="join_fanout", note="fan-out")
    first.refresh_from_db()
    assert not first.is_current and second.is_current
    assert Label.objects.filter(query=query, labeller=alice).count() == 2
    assert Query.objects.get(pk=query.pk).label_count == 1


def test_labels_of_different_labellers_both_stay_current(role_users):
    query = factories.query()
    label_create(query=query, labeller=role_users["labeller"], decision="correct")
    label_create(query=query, labeller=role_users["analyst"], decision="correct", source=LabelSource.TRIAGE)
    assert Label.objects.filter(query=query, is_current=True).count() == 2
    assert Query.objects.get(pk=query.pk).label_count == 2


def test_undo_restores_the_previous_label_and_keeps_the_undone_one(role_users):
    query = factories.query()
    alice = role_users["labeller"]
    first = label_create(query=query, labeller=alice, decision="correct")
    second = label_create(query=query, labeller=alice, decision="unsure")
    restored = label_undo(label=second)
    assert restored == first
    assert Label.objects.get(pk=first.pk).is_current
    assert not Label.objects.get(pk=second.pk).is_current
    assert Query.objects.get(pk=query.pk).label_count == 1


def test_undo_of_the_only_label_leaves_the_item_unlabelled(role_users):
    query = factories.query()
    label = label_create(query=query, labeller=role_users["labeller"], decision="correct")
    assert label_undo(label=label) is None
    assert Query.objects.get(pk=query.pk).label_count == 0
    assert Label.objects.filter(pk=label.pk, is_current=False).exists()


def test_a_wrong_label_needs_a_known_error_class(role_users):
    query = factories.query()
    with pytest.raises(ValidationError):
        label_create(query=query, labeller=role_users["labeller"], decision="wrong")
    with pytest.raises(ValidationError):
        label_create(query=query, labeller=role_users["labeller"], decision="wrong", error_class="nonsense")
    with pytest.raises(ValidationError):
        label_create(query=query, labeller=role_users["labeller"], decision="correct", error_class="syntax")


def test_the_database_refuses_two_current_labels_of_one_labeller(role_users):
    query = factories.query()
    Label.objects.create(query=query, labeller=role_users["labeller"], decision="correct")
    with pytest.raises(IntegrityError):
        Label.objects.create(query=query, labeller=role_users["labeller"], decision="unsure")


def test_the_database_refuses_an_adjudication_without_reason(role_users):
    query = factories.query()
    with pytest.raises(IntegrityError):
        Adjudication.objects.create(query=query, adjudicator=role_users["admin"], decision="correct", reason="")


def test_the_database_refuses_an_unsure_adjudication(role_users):
    query = factories.query()
    with pytest.raises(IntegrityError):
        Adjudication.objects.create(query=query, adjudicator=role_users["admin"], decision="unsure", reason="hm")
