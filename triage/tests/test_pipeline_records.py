"""The pipeline's bookkeeping: statuses, queue items, the audit sample, redelivery.

These run the orchestration with a policy that calls no judge, verifier or probe, or
store a decision directly; runs against the real judges and probes are in
test_pipeline_integration.py.
"""

import math

import pytest

from labelling.models import Query, QuerySource
from triage.decision import TriageDecision
from triage.models import IngestStatus, LiveQuery, TriageItem
from triage.pipeline import live_query_process, live_query_record_decision
from triage.tests import factories

pytestmark = pytest.mark.django_db


def test_the_audit_sample_of_unflagged_queries_is_within_tolerance_of_its_share():
    factories.quiet_policy(audit_share=0.25)
    lives = [factories.live_query() for _ in range(400)]
    for live in lives:
        assert live_query_process(live_id=live.pk) == IngestStatus.PASSED
    audited = LiveQuery.objects.filter(audit_query__isnull=False).count()
    expected, sd = 400 * 0.25, math.sqrt(400 * 0.25 * 0.75)
    assert abs(audited - expected) < 4 * sd
    copies = Query.objects.filter(source=QuerySource.AUDIT)
    assert copies.count() == audited
    sample = copies.first()
    assert LiveQuery.objects.get(audit_query=sample).query.external_id == sample.external_id
    assert sample.metadata["live_query_id"] == LiveQuery.objects.get(audit_query=sample).pk


def test_a_redelivered_task_changes_nothing():
    factories.quiet_policy(audit_share=1.0)
    live = factories.live_query()
    live_query_process(live_id=live.pk)
    assert live_query_process(live_id=live.pk) is None
    assert Query.objects.filter(source=QuerySource.AUDIT).count() == 1


def test_the_pipeline_fills_in_the_fingerprint():
    factories.quiet_policy()
    live = factories.live_query(sql="select  id FROM orders")
    live_query_process(live_id=live.pk)
    live.query.refresh_from_db()
    assert live.query.fingerprint


def test_a_flagged_decision_becomes_a_queue_item_with_its_evidence():
    policy = factories.quiet_policy()
    judge = factories.judge_version()
    live = factories.live_query(status=IngestStatus.PROCESSING)
    decision = TriageDecision(
        flagged=True,
        unjudged=False,
        reasons=["1 of 1 judges rejected (any)"],
        judges_total=1,
        judges_answered=1,
        judges_agreeing=1,
        rejecting_judge_ids=[judge.pk],
        error_class_guess="missing_filter",
    )
    status = live_query_record_decision(
        live_id=live.pk, policy=policy, decision=decision, verifier_stored={}, preview={}
    )
    assert status == IngestStatus.FLAGGED
    item = TriageItem.objects.get(query=live.query)
    assert item.error_class_guess == "missing_filter" and list(item.rejecting_judges.all()) == [judge]
    live.refresh_from_db()
    assert live.decision["judges_agreeing"] == 1 and live.policy == policy


def test_a_query_every_judge_errored_on_is_kept_as_unjudged():
    policy = factories.quiet_policy(audit_share=1.0)
    live = factories.live_query(status=IngestStatus.PROCESSING)
    decision = TriageDecision(flagged=False, unjudged=True, judges_total=2)
    live_query_record_decision(live_id=live.pk, policy=policy, decision=decision, verifier_stored={}, preview={})
    live.refresh_from_db()
    assert live.status == IngestStatus.UNJUDGED
    assert live.audit_query is None, "an unjudged query is shown to people, not sampled as if it had passed"
    assert not TriageItem.objects.exists()
