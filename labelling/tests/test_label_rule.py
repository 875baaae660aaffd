"""The one rule of a label's classes (a wrong label needs one, any other carries none), in Python and the database."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from labelling.forms import AdjudicationForm, LabelForm
from labelling.models import Adjudication, GoldSetVersion, GoldSetVersionItem, Label
from labelling.services import label_create
from labelling.tests.factories import gold_set as make_gold_set
from labelling.tests.factories import query as make_query
from triage.forms import DecisionForm

pytestmark = pytest.mark.django_db


@pytest.fixture
def query():
    return make_query(gold_set=make_gold_set("rule"))


@pytest.mark.parametrize(
    ("decision", "error_class"),
    [("wrong", ""), ("correct", "join_fanout"), ("unsure", "syntax"), ("wrong", ";syntax"), ("wrong", "a;;b")],
)
def test_the_database_refuses_a_label_that_breaks_the_rule(query, decision, error_class):
    with pytest.raises(IntegrityError), transaction.atomic():
        Label.objects.create(query=query, decision=decision, error_class=error_class)


def test_the_database_keeps_the_rule_for_adjudications_and_version_items(query, role_users):
    with pytest.raises(IntegrityError), transaction.atomic():
        Adjudication.objects.create(query=query, adjudicator=role_users["admin"], decision="wrong", reason="r")
    version = GoldSetVersion.objects.create(gold_set=query.gold_set, number=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        GoldSetVersionItem.objects.create(version=version, query=query, decision="correct", error_class="syntax")
    GoldSetVersionItem.objects.create(version=version, query=query, decision="wrong", error_class="dialect;syntax")


def test_clean_states_the_same_rule(query):
    with pytest.raises(ValidationError, match="needs an error class"):
        Label(query=query, decision="wrong").full_clean()
    with pytest.raises(ValidationError, match="Only a wrong label"):
        Label(query=query, decision="correct", error_class="syntax").full_clean()
    Label(query=query, decision="wrong", error_class="dialect;syntax").full_clean()


def test_the_service_the_forms_and_triage_all_apply_it(query):
    with pytest.raises(ValidationError, match="needs an error class"):
        label_create(query=query, labeller=None, decision="wrong")
    assert label_create(query=query, labeller=None, decision="wrong", error_class="syntax;dialect").error_class == (
        "dialect;syntax"
    )
    label_form = LabelForm({"decision": "wrong"}, gold_set=query.gold_set)
    adjudication_form = AdjudicationForm({"decision": "wrong", "reason": "r"}, gold_set=query.gold_set)
    triage_form = DecisionForm({"resolution": "confirmed_wrong"})
    for form in (label_form, adjudication_form, triage_form):
        assert not form.is_valid() and form.errors["error_class"] == ["A wrong label needs an error class."]
    assert LabelForm({"decision": "correct", "error_class": "syntax"}, gold_set=query.gold_set).is_valid()
