"""A k-of-n triage policy whose k its judges could never reach is refused when saved, with a message on k.

The check is the ensembles' own (`judges.metrics.k_of_n_problem`): before it, such a policy
was stored and then silently never flagged anything.
"""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judges.ensembles import threshold_for
from judges.metrics import k_of_n_problem
from triage.forms import TriagePolicyForm
from triage.models import TriagePolicy
from triage.policy import policy_publish
from triage.tests import factories

pytestmark = pytest.mark.django_db


def test_publishing_k_above_the_number_of_judges_is_refused_on_k():
    judges = [factories.judge_version(), factories.judge_version()]
    with pytest.raises(ValidationError) as refused:
        policy_publish(changes={"flag_rule": "k_of_n", "k": 3}, judge_versions=judges)
    assert list(refused.value.message_dict) == ["k"]
    assert "between 1 and 2" in refused.value.message_dict["k"][0]
    assert not TriagePolicy.objects.exists()


def test_a_policy_inherits_its_judges_and_is_checked_against_them():
    policy_publish(changes={}, judge_versions=[factories.judge_version()])
    with pytest.raises(ValidationError, match="between 1 and 1"):
        policy_publish(changes={"flag_rule": "k_of_n", "k": 2})
    assert TriagePolicy.objects.count() == 1


def test_k_up_to_the_number_of_judges_is_accepted_and_other_rules_ignore_k():
    judges = [factories.judge_version(), factories.judge_version()]
    assert policy_publish(changes={"flag_rule": "k_of_n", "k": 2}, judge_versions=judges).k == 2
    assert policy_publish(changes={"flag_rule": "any", "k": 5}, judge_versions=judges).flag_rule == "any"


def test_a_saved_policy_is_checked_against_its_own_judges_by_clean():
    policy = policy_publish(changes={}, judge_versions=[factories.judge_version()])
    policy.flag_rule, policy.k = "k_of_n", 2
    with pytest.raises(ValidationError) as refused:
        policy.full_clean()
    assert "k" in refused.value.message_dict


def test_the_admin_form_puts_the_message_on_the_k_field(settings):
    settings.ANTHROPIC_API_KEY = (
        "key-of-this-environment"  # the factory's judges call Anthropic: the form checks its key is set
    )
    judge = factories.judge_version()
    data = {
        "judge_versions": [judge.pk],
        "flag_rule": "k_of_n",
        "k": 2,
        "audit_share": 0.1,
        "audit_scope": "accepted",
        "sla_minutes": 30,
        "claim_timeout_minutes": 10,
    }
    form = TriagePolicyForm(data=data)
    assert not form.is_valid()
    assert "between 1 and 1" in form.errors["k"][0]
    assert TriagePolicyForm(data={**data, "k": 1}).is_valid()


def test_the_admin_refuses_the_policy_and_says_why(client, role_users, settings):
    settings.ANTHROPIC_API_KEY = (
        "key-of-this-environment"  # the factory's judges call Anthropic: the form checks its key is set
    )
    admin = role_users["admin"]
    admin.is_staff = True
    admin.save()
    client.force_login(admin)
    policy = policy_publish(changes={}, judge_versions=[factories.judge_version()])
    form = {
        "judge_versions": [judge.pk for judge in policy.judge_versions.all()],
        "flag_rule": "k_of_n",
        "k": 3,
        "audit_share": 0.2,
        "audit_scope": "accepted",
        "sla_minutes": 30,
        "claim_timeout_minutes": 10,
    }
    response = client.post(reverse("admin:triage_triagepolicy_change", args=[policy.pk]), form)
    assert response.status_code == 200
    assert "k must be between 1 and 1" in response.content.decode()
    assert TriagePolicy.objects.count() == 1
    # A change that adds judges is checked against the new judges, not the stored ones.
    more = [factories.judge_version(), factories.judge_version()]
    form["judge_versions"] += [judge.pk for judge in more]
    response = client.post(reverse("admin:triage_triagepolicy_change", args=[policy.pk]), form)
    assert response.status_code == 302
    assert TriagePolicy.objects.order_by("-version").first().k == 3


@pytest.mark.parametrize(("k", "n"), [(0, 2), (3, 2), (2, 2), (1, 1), (1, 0)])
def test_ensembles_and_triage_refuse_the_same_k_with_the_same_words(k, n):
    problem = k_of_n_problem(k, n)
    policy = TriagePolicy(version=1, flag_rule="k_of_n", k=k)
    if problem is None:
        assert threshold_for("k_of_n", n, k) == k
        policy.k_check(judge_count=n)
        return
    with pytest.raises(ValueError) as ensemble_refusal:
        threshold_for("k_of_n", n, k)
    with pytest.raises(ValidationError) as policy_refusal:
        policy.k_check(judge_count=n)
    assert str(ensemble_refusal.value) == problem
    assert policy_refusal.value.message_dict["k"] == [f"{problem}."]
