"""Chunk leases have owners: renew, finish and release check the holder's token, and a resume
hands back only expired leases, so cancel → resume never pays the vendor twice for an item."""

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from judges import services
from judges.backends import get_backend, judge_safely
from judges.chunk_writer import ChunkWriter, chunk_finish
from judges.chunks import chunk_claim, chunk_done, chunk_lease_renew, chunk_queries, chunk_release
from judges.models import CalibrationRun, ChunkStatus, RunChunk, RunStatus, Verdict
from judges.runner import run_chunk_execute
from judges.services import calibration_run_cancel, calibration_run_resume, calibration_run_start
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from simulator import SimModel, Simulator, start_in_thread
from tests.support.fixtures import wait_for


def lapse(chunk_id):
    """As if the chunk's worker stopped renewing long ago."""
    RunChunk.objects.filter(pk=chunk_id).update(lease_until=timezone.now() - timedelta(minutes=1))


def one_chunk_run(items, judge_version):
    run = calibration_run_start(
        gold_set_version=gold_set_version_with(items), judge_versions=[judge_version], repeats=1
    )
    return run, RunChunk.objects.get(run=run).pk


@pytest.mark.django_db
def test_a_worker_whose_lease_was_taken_over_can_neither_renew_finish_nor_release_it(vendor_simulator):
    _, chunk_id = one_chunk_run(mixed_items(2, 1), simulated_version())
    first = chunk_claim(chunk_id=chunk_id)
    lapse(chunk_id)
    second = chunk_claim(chunk_id=chunk_id)
    assert second.lease_token and second.lease_token != first.lease_token
    assert not chunk_lease_renew(chunk=first)
    assert not chunk_release(chunk=first)
    assert not chunk_done(chunk=first)
    row = RunChunk.objects.get(pk=chunk_id)
    assert row.status == ChunkStatus.RUNNING and row.lease_token == second.lease_token
    assert chunk_lease_renew(chunk=second) and chunk_done(chunk=second)
    assert RunChunk.objects.get(pk=chunk_id).status == ChunkStatus.DONE


@pytest.mark.django_db
def test_a_writer_that_lost_its_lease_stores_what_it_paid_for_stops_and_leaves_the_chunk_alone(vendor_simulator):
    judge_version = simulated_version()
    run, chunk_id = one_chunk_run(mixed_items(3, 1), judge_version)
    writer = ChunkWriter(chunk_claim(chunk_id=chunk_id))
    query = next(chunk_queries(chunk=writer.chunk, skip_ids=set()))
    writer.add(query, judge_safely(get_backend(judge_version), query))
    lapse(chunk_id)
    holder = chunk_claim(chunk_id=chunk_id)
    writer.flush()
    assert writer.lease_lost and writer.stopping
    assert Verdict.objects.filter(run=run, query=query).count() == 1  # paid for: kept
    assert chunk_finish(writer=writer).startswith("stopped: lease lost")
    row = RunChunk.objects.get(pk=chunk_id)
    assert row.status == ChunkStatus.RUNNING and row.lease_token == holder.lease_token


@pytest.mark.django_db
def test_resume_hands_back_only_the_chunks_whose_lease_expired(vendor_simulator):
    versions = [simulated_version(), simulated_version("other")]
    run = calibration_run_start(
        gold_set_version=gold_set_version_with(mixed_items(2, 1)), judge_versions=versions, repeats=1
    )
    held, dead = (
        chunk_claim(chunk_id=pk) for pk in RunChunk.objects.filter(run=run).order_by("pk").values_list("pk", flat=True)
    )
    lapse(dead.pk)
    calibration_run_cancel(run=run)
    calibration_run_resume(run=run)
    still_held = RunChunk.objects.get(pk=held.pk)
    assert still_held.status == ChunkStatus.RUNNING and still_held.lease_token == held.lease_token
    assert RunChunk.objects.get(pk=dead.pk).status == ChunkStatus.PENDING


STEADY = SimModel(catch_probability=1.0, false_reject_probability=0.0, flip_probability=0.0, latency_ms=60)
ITEMS = 60


@pytest.fixture
def steady_simulator(settings):
    simulator = Simulator(models={"sim-steady": STEADY})
    server, url = start_in_thread(simulator)
    settings.VENDOR_SIMULATOR_URL = url
    yield simulator
    server.shutdown()
    server.server_close()


def judge_on_a_thread(chunk_id, outcomes):
    """The worker that holds the chunk when the run is cancelled: judging, on its own connection."""
    try:
        outcomes.append(run_chunk_execute(chunk_id=chunk_id, continue_with_next=False))
    finally:
        connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_cancel_then_resume_while_a_worker_is_judging_pays_the_vendor_for_no_item_twice(steady_simulator, monkeypatch):
    sent = []  # the broker: lanes and plans are run by hand below
    monkeypatch.setattr(services, "run_chunks_enqueue", lambda *, chunk_ids: sent.extend(chunk_ids))
    monkeypatch.setattr(services, "run_plan_enqueue", lambda *, run: sent.append(("plan", run.pk)))
    run, chunk_id = one_chunk_run(mixed_items(ITEMS - 10, 10), simulated_version(model="sim-steady", concurrency=2))
    outcomes: list = []
    worker = threading.Thread(target=judge_on_a_thread, args=(chunk_id, outcomes))
    worker.start()
    try:
        wait_for(lambda: Verdict.objects.filter(run=run).exists(), timeout=60, what="the worker's first verdicts")
        calibration_run_cancel(run=run)
        calibration_run_resume(run=run)
        # The resumed run's lane arrives while the first worker is still judging the chunk.
        run_chunk_execute(chunk_id=chunk_id, hand_on=sent.append)
    finally:
        worker.join(timeout=120)
    assert not worker.is_alive()
    # A worker that saw the cancel before the resume handed the chunk back: finish what is left.
    for pending in RunChunk.objects.filter(run=run, status=ChunkStatus.PENDING).values_list("pk", flat=True):
        run_chunk_execute(chunk_id=pending)
    assert CalibrationRun.objects.get(pk=run.pk).status == RunStatus.COMPLETED
    assert Verdict.objects.filter(run=run).count() == ITEMS
    calls = steady_simulator.calls_per_sql
    assert len(calls) == ITEMS and sum(calls.values()) == ITEMS, f"judged twice: {[c for c in calls.values() if c > 1]}"
