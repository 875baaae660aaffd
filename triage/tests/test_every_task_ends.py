"""Every pipeline task ends: a retry re-enters its own claim, failures are counted, and after
TRIAGE_MAX_ATTEMPTS a live query is `failed`, shown with its last error, and can be requeued."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import OperationalError
from django.urls import reverse
from django.utils import timezone

from judges.models import Backend, Judge, JudgeVersion
from triage import pipeline
from triage.claims import live_query_claim
from triage.enqueue import live_queries_requeue_stale
from triage.models import IngestStatus, LiveQuery, TriagePolicy
from triage.pipeline import live_query_process, live_query_record_decision
from triage.policy import policy_publish
from triage.tasks import process_live_query
from triage.tests import factories

pytestmark = pytest.mark.django_db


def replay_version(name="imported-judge"):
    judge = Judge.objects.create(name=name)
    return JudgeVersion.objects.create(judge=judge, number=1, backend=Backend.REPLAY)


def policy_with_replay_judge_saved_before_the_check():
    """A policy as one stored before replay judges were refused: every live query raises on it."""
    policy = TriagePolicy.objects.create(version=1, run_verifier=False, run_fanout_detector=False, audit_share=0)
    policy.judge_versions.set([replay_version()])
    return policy


def test_a_transient_error_is_retried_by_the_same_task_which_re_enters_its_own_claim(monkeypatch):
    factories.quiet_policy()
    live = factories.live_query()
    real_policy_current, calls = pipeline.policy_current, []

    def database_drops_once():
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real_policy_current()

    monkeypatch.setattr(pipeline, "policy_current", database_drops_once)
    # Celery's own retry (eager here): the retry carries the same task id.
    result = process_live_query.apply(args=[live.pk], task_id="task-42")
    assert result.get() == IngestStatus.PASSED
    live.refresh_from_db()
    assert live.status == IngestStatus.PASSED and len(calls) == 2
    # A retry is not a new attempt: the query had one pipeline run.
    assert live.pipeline_attempts == 1 and live.claim_token == ""


def test_another_delivery_of_a_query_being_processed_finds_it_taken():
    live = factories.live_query()
    assert live_query_claim(live_id=live.pk, token="first")
    assert live_query_claim(live_id=live.pk, token="first")  # its own retry
    assert not live_query_claim(live_id=live.pk, token="second")
    assert LiveQuery.objects.get(pk=live.pk).pipeline_attempts == 1


def test_a_query_that_keeps_raising_ends_failed_with_its_last_error_after_the_attempt_limit(settings):
    settings.TRIAGE_MAX_ATTEMPTS = 3
    policy_with_replay_judge_saved_before_the_check()
    live = factories.live_query()
    statuses = [live_query_process(live_id=live.pk) for _ in range(3)]
    assert statuses == [IngestStatus.PENDING, IngestStatus.PENDING, IngestStatus.FAILED]
    live.refresh_from_db()
    assert live.pipeline_attempts == 3 and live.finished_at is not None
    assert live.last_error.startswith("BackendCannotJudge:") and "imported-judge v1" in live.last_error
    # Over: no task takes it again and the sweeper leaves it alone.
    assert live_query_process(live_id=live.pk) is None
    assert live_queries_requeue_stale(older_than=timedelta(0)) == 0


def test_a_failed_run_goes_back_to_the_sweeper_until_the_limit(settings):
    settings.TRIAGE_MAX_ATTEMPTS = 2
    policy_with_replay_judge_saved_before_the_check()
    live = factories.live_query()
    LiveQuery.objects.filter(pk=live.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    assert live_query_process(live_id=live.pk) == IngestStatus.PENDING
    assert LiveQuery.objects.get(pk=live.pk).enqueued_at is None  # for the sweeper's next pass
    assert live_queries_requeue_stale() == 1


def test_a_worker_that_dies_mid_run_uses_an_attempt_and_the_query_fails_after_the_limit(settings):
    settings.TRIAGE_MAX_ATTEMPTS = 2
    settings.TRIAGE_PROCESSING_TIMEOUT_S = 60
    live = factories.live_query()
    long_ago = timezone.now() - timedelta(minutes=5)
    assert live_query_claim(live_id=live.pk, token="worker-1")
    LiveQuery.objects.filter(pk=live.pk).update(started_at=long_ago)  # worker 1 died
    assert live_query_claim(live_id=live.pk, token="worker-2")
    LiveQuery.objects.filter(pk=live.pk).update(started_at=long_ago)  # worker 2 died too
    assert not live_query_claim(live_id=live.pk, token="worker-3")
    live.refresh_from_db()
    assert live.status == IngestStatus.FAILED
    assert live.last_error == "gave up after 2 attempts: the worker processing it stopped before finishing"


def test_a_worker_whose_claim_was_taken_over_stores_nothing(settings):
    settings.TRIAGE_PROCESSING_TIMEOUT_S = 60
    policy = factories.quiet_policy()
    live = factories.live_query()
    assert live_query_claim(live_id=live.pk, token="slow")
    LiveQuery.objects.filter(pk=live.pk).update(started_at=timezone.now() - timedelta(minutes=5))
    assert live_query_claim(live_id=live.pk, token="new")
    stale = live_query_record_decision(
        live_id=live.pk,
        policy=policy,
        decision=pipeline.decide(verifier=None, votes=[], probes=[], rule=pipeline.rule_from_policy(policy)),
        verifier_stored={},
        preview={},
        claim_token="slow",
    )
    assert stale == IngestStatus.PROCESSING
    assert LiveQuery.objects.get(pk=live.pk).claim_token == "new"


def failed_query(error="BackendCannotJudge: no"):
    live = factories.live_query(status=IngestStatus.FAILED)
    LiveQuery.objects.filter(pk=live.pk).update(last_error=error, pipeline_attempts=5, finished_at=timezone.now())
    return live


def test_the_unjudged_page_lists_failed_queries_with_their_last_error_and_a_requeue_button(client_for):
    live = failed_query("BackendCannotJudge: imported-judge v1 replays imported verdicts")
    html = client_for("analyst").get(reverse("triage:unjudged")).content.decode()
    assert live.query.external_id in html and "imported-judge v1 replays imported verdicts" in html
    assert reverse("triage:requeue", args=[live.pk]) in html


@pytest.mark.usefixtures("synchronous_publish")
def test_an_analyst_requeues_a_failed_query_which_is_sent_again_with_fresh_attempts(
    client_for, django_capture_on_commit_callbacks, synchronous_publish, eager_tasks
):
    # The message runs here (eager_tasks): the query is judged again.
    factories.quiet_policy()
    live = failed_query()
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for("analyst").post(reverse("triage:requeue", args=[live.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("triage:unjudged")
    live.refresh_from_db()
    assert (live.status, live.pipeline_attempts, live.last_error) == (IngestStatus.PASSED, 1, "")


@pytest.mark.parametrize("who", ["labeller", "ml_engineer", "outsider"])
def test_requeue_is_refused_to_who_is_not_an_analyst(client_for, who):
    live = failed_query()
    assert client_for(who).post(reverse("triage:requeue", args=[live.pk])).status_code == 403
    assert LiveQuery.objects.get(pk=live.pk).status == IngestStatus.FAILED


def test_requeue_rejects_get_and_leaves_a_query_that_is_not_failed_alone(client_for):
    live = failed_query()
    assert client_for("analyst").get(reverse("triage:requeue", args=[live.pk])).status_code == 405
    passed = factories.live_query(status=IngestStatus.PASSED)
    client_for("analyst").post(reverse("triage:requeue", args=[passed.pk]))
    assert LiveQuery.objects.get(pk=passed.pk).status == IngestStatus.PASSED


def test_a_replay_judge_is_refused_in_a_triage_policy_with_a_message():
    judge = factories.judge_version("live-judge")
    with pytest.raises(ValidationError) as refused:
        policy_publish(changes={}, judge_versions=[judge, replay_version("promptfoo-judge")])
    assert refused.value.message_dict["judge_versions"] == [
        "promptfoo-judge v1 cannot judge live traffic: it replays verdicts imported from elsewhere "
        "and has nothing to answer a new query with."
    ]
    assert not TriagePolicy.objects.exists()


def test_the_admin_refuses_a_policy_with_a_replay_judge_and_says_why(client_for, role_users):
    role_users["admin"].is_staff = True
    role_users["admin"].save(update_fields=["is_staff"])
    replayed = replay_version("promptfoo-judge")
    form = {
        "judge_versions": [replayed.pk],
        "flag_rule": "any",
        "k": 1,
        "audit_share": 0.05,
        "audit_scope": "accepted",
        "sla_minutes": 240,
        "claim_timeout_minutes": 15,
        "run_verifier": "on",
    }
    response = client_for("admin").post(reverse("admin:triage_triagepolicy_add"), form)
    assert response.status_code == 200
    assert "promptfoo-judge v1 cannot judge live traffic: it replays verdicts" in response.content.decode()
    assert not TriagePolicy.objects.exists()
