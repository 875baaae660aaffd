"""Invariants the database enforces for triage rows."""

import re

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from probes.models import ProbeRun
from triage.models import ApiToken, TriageItem, TriagePolicy, TriageProbe
from triage.policy import policy_publish
from triage.tests import factories
from triage.tokens import api_token_issue, hash_token

pytestmark = pytest.mark.django_db


def raises_integrity(fn):
    with pytest.raises(IntegrityError), transaction.atomic():
        fn()


def test_policy_versions_are_unique():
    policy_publish(changes={})
    raises_integrity(lambda: TriagePolicy.objects.create(version=1))


def test_audit_share_must_be_a_share():
    raises_integrity(lambda: TriagePolicy.objects.create(version=7, audit_share=1.5))


def test_k_must_be_positive():
    raises_integrity(lambda: TriagePolicy.objects.create(version=8, k=0))


def test_a_claimed_item_must_name_its_assignee():
    item = factories.triage_item()
    raises_integrity(lambda: TriageItem.objects.filter(pk=item.pk).update(status="claimed"))


def test_resolved_exactly_when_a_resolution_is_recorded():
    item = factories.triage_item()
    raises_integrity(lambda: TriageItem.objects.filter(pk=item.pk).update(status="resolved"))
    raises_integrity(lambda: TriageItem.objects.filter(pk=item.pk).update(resolution="unclear"))


def test_one_probe_per_source_per_live_query():
    item = factories.triage_item()
    run = ProbeRun.objects.create(warehouse=item.query.warehouse, outcome="refuted", guard_allowed=True)
    TriageProbe.objects.create(live_query=item.query.live, source="fanout_detector", probe_run=run)
    raises_integrity(
        lambda: TriageProbe.objects.create(live_query=item.query.live, source="fanout_detector", probe_run=run)
    )


def test_tokens_are_stored_only_as_hashes():
    token, plaintext = api_token_issue(client="acme", scopes=["ingest"])
    stored = ApiToken.objects.get(pk=token.pk)
    assert plaintext not in (stored.token_hash, stored.prefix)
    assert stored.token_hash == hash_token(plaintext)


def test_publishing_a_policy_keeps_earlier_versions_unchanged():
    judge = factories.judge_version()
    first = policy_publish(changes={"audit_share": 0.1}, judge_versions=[judge])
    second = policy_publish(changes={"flag_rule": "majority"})
    first.refresh_from_db()
    assert (first.version, first.flag_rule, second.version) == (1, "any", 2)
    assert second.audit_share == 0.1 and list(second.judge_versions.all()) == [judge]


def test_editing_a_policy_in_the_admin_publishes_a_new_version(client, role_users, settings):
    settings.ANTHROPIC_API_KEY = (
        "key-of-this-environment"  # the factory's judges call Anthropic: the form checks its key is set
    )
    admin = role_users["admin"]
    admin.is_staff = True
    admin.save()
    client.force_login(admin)
    policy = policy_publish(changes={})
    judges = [factories.judge_version(), factories.judge_version()]
    form = {
        "judge_versions": [judge.pk for judge in judges],
        "flag_rule": "k_of_n",
        "k": 2,
        "run_verifier": "on",
        "flag_on_verifier_failure": "on",
        "audit_share": 0.2,
        "audit_scope": "accepted",
        "sla_minutes": 30,
        "claim_timeout_minutes": 10,
        "note": "stricter",
    }
    response = client.post(reverse("admin:triage_triagepolicy_change", args=[policy.pk]), form)
    assert response.status_code == 302
    assert TriagePolicy.objects.count() == 2
    latest = TriagePolicy.objects.order_by("-version").first()
    assert (latest.version, latest.flag_rule, latest.k, latest.run_fanout_detector) == (2, "k_of_n", 2, False)
    policy.refresh_from_db()
    assert policy.flag_rule == "any"


def test_an_admin_issues_a_token_and_sees_it_once(client, role_users):
    admin = role_users["admin"]
    admin.is_staff = True
    admin.save()
    client.force_login(admin)
    response = client.post(
        reverse("admin:triage_apitoken_add"), {"client": "acme", "name": "prod", "scopes": '["ingest"]'}
    )
    token = ApiToken.objects.get()
    # Shown on the page answering the POST, not in a message (test_token_admin.py).
    plaintext = re.search(r"dkt_[0-9a-f]{8}_[\w-]+", response.content.decode()).group(0)
    assert hash_token(plaintext) == token.token_hash and token.scopes == ["ingest"]
