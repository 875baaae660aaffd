"""Version numbers in the labelling pages' query strings: a 404 or a message, never a 500 (issue 26, item 7)."""

import pytest
from django.urls import reverse

from labelling.services import goldset_publish, label_create
from labelling.tests import factories

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("number", ["²", "9" * 30, "-1", "1.5"])
def test_a_version_that_is_not_a_number_is_a_404_or_a_message_never_a_500(client_for, role_users, number):
    gold_set = factories.gold_set(name="shop")
    label_create(query=factories.query(gold_set=gold_set), labeller=role_users["labeller"], decision="correct")
    goldset_publish(gold_set=gold_set)
    client = client_for("ml_engineer")
    client.raise_request_exception = False
    agreement = client.get(reverse("labelling:agreement", args=["shop"]), {"version": number})
    assert agreement.status_code == 404
    diff = client.get(reverse("labelling:version_diff", args=["shop"]), {"old": number, "new": "1"}, follow=True)
    assert diff.redirect_chain[-1][0] == reverse("labelling:goldset_detail", args=["shop"])
    assert "Pick two versions to compare." in diff.content.decode()
