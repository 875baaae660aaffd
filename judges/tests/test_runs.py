"""Calibration runs: one verdict per slot, spend cap, cancel and resume, idempotent chunks."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from judges import runner, services
from judges.chunks import lease_duration
from judges.demo import run_inline
from judges.models import CalibrationRun, ChunkStatus, RunChunk, RunStatus, Verdict
from judges.runner import run_chunk_execute
from judges.selectors import run_progress_get
from judges.services import (
    calibration_run_cancel,
    calibration_run_plan,
    calibration_run_resume,
    calibration_run_start,
    run_stale_chunks_requeue,
)
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version

pytestmark = pytest.mark.django_db


def test_a_second_verdict_for_the_same_run_slot_is_refused_by_the_database(vendor_simulator):
    run = run_inline(
        gold_set_version=gold_set_version_with(mixed_items(2, 1)), judge_versions=[simulated_version()], repeats=1
    )
    verdict = Verdict.objects.filter(run=run).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Verdict.objects.create(
            judge_version=verdict.judge_version, query=verdict.query, run=run, repeat=0, decision="accept"
        )


def test_a_second_live_verdict_for_the_same_query_and_version_is_refused(vendor_simulator):
    run = run_inline(
        gold_set_version=gold_set_version_with(mixed_items(1, 0)), judge_versions=[simulated_version()], repeats=1
    )
    verdict = Verdict.objects.get(run=run)
    Verdict.objects.create(judge_version=verdict.judge_version, query=verdict.query, run=None, decision="accept")
    with pytest.raises(IntegrityError), transaction.atomic():
        Verdict.objects.create(judge_version=verdict.judge_version, query=verdict.query, run=None, decision="reject")


def test_planning_a_run_twice_creates_each_chunk_once(vendor_simulator, django_capture_on_commit_callbacks):
    version = gold_set_version_with(mixed_items(5, 2))
    run = calibration_run_start(gold_set_version=version, judge_versions=[simulated_version()], repeats=3)
    first = calibration_run_plan(run=run)
    second = calibration_run_plan(run=run)
    assert sorted(first) == sorted(second)
    assert RunChunk.objects.filter(run=run).count() == 3
    run.refresh_from_db()
    assert run.total_tasks == 7 * 3 and run.status == RunStatus.RUNNING


def test_a_chunk_with_inverted_bounds_is_refused_by_the_database(vendor_simulator):
    run = calibration_run_start(
        gold_set_version=gold_set_version_with(mixed_items(1, 0)), judge_versions=[simulated_version()], repeats=1
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        RunChunk.objects.create(
            run=run, judge_version=run.judge_versions.first(), repeat=0, first_query_id=9, last_query_id=1, item_count=1
        )


def test_a_redelivered_chunk_does_no_double_work(vendor_simulator):
    version = gold_set_version_with(mixed_items(4, 2))
    run = calibration_run_start(gold_set_version=version, judge_versions=[simulated_version()], repeats=1)
    (chunk_id,) = calibration_run_plan(run=run)
    assert run_chunk_execute(chunk_id=chunk_id) == "done"
    calls = vendor_simulator.stats["anthropic:requests"]
    # The broker hands the same task out again: the chunk is done, nothing is claimed.
    assert run_chunk_execute(chunk_id=chunk_id) == "not claimed"
    # Even a chunk forced back to pending (of a run not yet finished) judges only what is missing: nothing.
    RunChunk.objects.filter(pk=chunk_id).update(status=ChunkStatus.PENDING)
    CalibrationRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    assert run_chunk_execute(chunk_id=chunk_id) == "done"
    assert vendor_simulator.stats["anthropic:requests"] == calls
    assert Verdict.objects.filter(run=run).count() == 6


def test_a_chunk_interrupted_half_way_completes_only_the_missing_items(vendor_simulator):
    version = gold_set_version_with(mixed_items(6, 2))
    run = calibration_run_start(gold_set_version=version, judge_versions=[simulated_version()], repeats=1)
    (chunk_id,) = calibration_run_plan(run=run)
    run_chunk_execute(chunk_id=chunk_id)
    # As if the worker died before its last flush: two verdicts never stored, run not finished.
    Verdict.objects.filter(run=run, query__external_id__in=["item-0", "item-7"]).delete()
    RunChunk.objects.filter(pk=chunk_id).update(status=ChunkStatus.PENDING)
    CalibrationRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    before = vendor_simulator.stats["anthropic:requests"]
    run_chunk_execute(chunk_id=chunk_id)
    assert vendor_simulator.stats["anthropic:requests"] - before == 2
    assert Verdict.objects.filter(run=run).count() == 8


def test_the_spend_cap_stops_the_run_cleanly(vendor_simulator):
    version = gold_set_version_with(mixed_items(300, 0))
    judge_version = simulated_version(concurrency=2)
    run = run_inline(gold_set_version=version, judge_versions=[judge_version], repeats=1, spend_cap_usd=Decimal("0.01"))
    assert run.status == RunStatus.STOPPED_BUDGET
    assert "spend cap" in run.stop_reason
    stored = Verdict.objects.filter(run=run).count()
    assert 0 < stored < 300
    assert not Verdict.objects.filter(run=run, decision="error").exists()
    # Whatever was paid for is recorded: the chunk went back to pending for a resume.
    assert RunChunk.objects.get(run=run).status == ChunkStatus.PENDING


def test_a_cancelled_run_stops_and_a_resumed_one_finishes_without_duplicates(
    vendor_simulator, django_capture_on_commit_callbacks
):
    version = gold_set_version_with(mixed_items(8, 4))
    run = calibration_run_start(
        gold_set_version=version, judge_versions=[simulated_version(), simulated_version("other")], repeats=2
    )
    chunk_ids = calibration_run_plan(run=run)
    run_chunk_execute(chunk_id=chunk_ids[0], continue_with_next=False)
    calibration_run_cancel(run=run)
    assert run_chunk_execute(chunk_id=chunk_ids[1]).startswith("not started")
    with pytest.raises(ValidationError):
        calibration_run_cancel(run=run)
    calibration_run_resume(run=run)
    for chunk_id in calibration_run_plan(run=run):
        run_chunk_execute(chunk_id=chunk_id)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert Verdict.objects.filter(run=run).count() == 12 * 2 * 2
    assert run.done_count == 48


def test_a_run_cannot_use_a_replay_judge_or_an_empty_gold_set(vendor_simulator):
    version = gold_set_version_with(mixed_items(1, 0))
    with pytest.raises(ValidationError, match="replay"):
        calibration_run_start(gold_set_version=version, judge_versions=[simulated_version(backend="replay")])
    with pytest.raises(ValidationError, match="repeats"):
        calibration_run_start(gold_set_version=version, judge_versions=[simulated_version("x")], repeats=0)


def test_a_budget_stopped_run_resumes_only_with_a_higher_cap_and_then_completes(vendor_simulator):
    version = gold_set_version_with(mixed_items(150, 0))
    judge_version = simulated_version(concurrency=2)
    cap = Decimal("0.005")
    run = run_inline(gold_set_version=version, judge_versions=[judge_version], repeats=1, spend_cap_usd=cap)
    assert run.status == RunStatus.STOPPED_BUDGET
    with pytest.raises(ValidationError, match="raise the cap"):
        calibration_run_resume(run=run)
    calibration_run_resume(run=run, spend_cap_usd=Decimal("10"))
    for chunk_id in calibration_run_plan(run=run):
        run_chunk_execute(chunk_id=chunk_id)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert Verdict.objects.filter(run=run).count() == 150


def test_the_progress_of_a_running_run_has_an_eta_and_counts_errors(vendor_simulator):
    version = gold_set_version_with(mixed_items(4, 0, faults=["500"]))
    judge_versions = [simulated_version(), simulated_version("b")]
    run = calibration_run_start(gold_set_version=version, judge_versions=judge_versions, repeats=1)
    first, _second = calibration_run_plan(run=run)
    run_chunk_execute(chunk_id=first, continue_with_next=False)
    run.refresh_from_db()
    progress = run_progress_get(run=run)
    assert (progress["done"], progress["total"], progress["errors"]) == (5, 10, 1)
    assert progress["percent"] == 50.0
    assert progress["eta_seconds"] is not None and progress["spent_usd"] > 0


class LocalBroker:
    """Stands in for the broker: a queue of chunk ids the lanes' tasks are sent to."""

    def __init__(self):
        self.queued: list[int] = []
        self.sent = 0

    def send(self, chunk_ids):
        self.queued.extend(chunk_ids)
        self.sent += len(chunk_ids)

    def work_off(self):
        """Run the queued tasks in order, as one worker process would; return their outcomes."""
        outcomes = []
        while self.queued:
            outcomes.append(run_chunk_execute(chunk_id=self.queued.pop(0), hand_on=lambda c: self.send([c])))
        return outcomes


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of two items, two lanes per judge version, one chunk per task before it hands on."""
    monkeypatch.setattr(services, "CHUNK_SIZE", 2)
    monkeypatch.setattr(services, "LANES_PER_JUDGE_VERSION", 2)
    monkeypatch.setattr(runner, "CHAIN_SECONDS", 0)
    broker = LocalBroker()
    monkeypatch.setattr(services, "run_chunks_enqueue", broker.send)
    return broker


def test_a_run_of_many_chunks_queues_a_few_lanes_that_hand_themselves_on_to_the_end(
    vendor_simulator, small_chunks, django_capture_on_commit_callbacks
):
    versions = [simulated_version(), simulated_version("other")]
    with django_capture_on_commit_callbacks(execute=True):
        run = calibration_run_start(gold_set_version=gold_set_version_with(mixed_items(8, 4)), judge_versions=versions)
    chunks = RunChunk.objects.filter(run=run)
    assert chunks.count() == 6 * 3 * 2
    # Two lanes per judge version, the versions alternating, not one task per chunk.
    assert [RunChunk.objects.get(pk=c).judge_version for c in small_chunks.queued] == versions * 2
    outcomes = small_chunks.work_off()
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED and run.done_count == 12 * 3 * 2
    assert Verdict.objects.filter(run=run).count() == 12 * 3 * 2
    # Each task judged a chunk, but for one per judge version: the lane that found none left.
    assert outcomes.count("done") == chunks.count()
    assert outcomes.count("not claimed") == 2 and small_chunks.sent == chunks.count() + 2


def test_a_lane_whose_chunk_is_taken_judges_another_of_its_judge_version(vendor_simulator, small_chunks):
    version = gold_set_version_with(mixed_items(4, 0))
    run = calibration_run_start(gold_set_version=version, judge_versions=[simulated_version()], repeats=1)
    first, second = calibration_run_plan(run=run)
    assert run_chunk_execute(chunk_id=first, continue_with_next=False) == "done"
    # The broker hands the lane out again for its first chunk, already judged.
    assert run_chunk_execute(chunk_id=first, hand_on=small_chunks.send) == "done"
    assert RunChunk.objects.get(pk=second).status == ChunkStatus.DONE
    assert small_chunks.queued == []  # nothing left: the lane ends
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED and Verdict.objects.filter(run=run).count() == 4


def test_the_stale_check_requeues_a_crashed_chunk_and_revives_a_run_whose_lanes_were_lost(
    vendor_simulator, small_chunks
):
    version = gold_set_version_with(mixed_items(4, 0))
    # Its lanes are queued on commit, which never comes here: as if the broker lost them.
    run = calibration_run_start(gold_set_version=version, judge_versions=[simulated_version()], repeats=1)
    first, second = RunChunk.objects.filter(run=run).order_by("pk").values_list("pk", flat=True)
    assert run_stale_chunks_requeue() == 0  # just planned: nothing is stale yet
    long_ago = timezone.now() - lease_duration() - timedelta(minutes=1)
    RunChunk.objects.filter(run=run).update(updated_at=long_ago)
    assert run_stale_chunks_requeue() == 2 and small_chunks.queued == [first, second]
    assert run_stale_chunks_requeue() == 0  # revived: the next check waits a lease again
    small_chunks.queued.clear()
    # A worker claimed the first chunk and died: its lease runs out.
    RunChunk.objects.filter(pk=first).update(status=ChunkStatus.RUNNING, lease_until=long_ago)
    assert run_stale_chunks_requeue() == 1 and small_chunks.queued == [first]
    small_chunks.work_off()
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED and Verdict.objects.filter(run=run).count() == 4
