"""A real Celery worker killed mid-run: the resumed run completes with nothing missing or doubled."""

import pytest
from django.db.models import Count
from django.utils import timezone

from judges.models import CalibrationRun, ChunkStatus, RunChunk, RunStatus, Verdict
from judges.services import calibration_run_resume, calibration_run_start
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from tests.support.fixtures import WorkerProcess, wait_for

ITEMS, REPEATS = 240, 2
# A short lease, so the killed worker's chunks are free again within seconds: a resume hands
# back only expired leases (a live worker's chunk is left to it).
LEASE_S = "5"


@pytest.mark.worker
@pytest.mark.slow
def test_a_run_resumed_after_its_worker_was_killed_completes_with_no_missing_and_no_duplicate_verdicts(
    transactional_db, vendor_simulator
):
    version = gold_set_version_with(mixed_items(correct=ITEMS - 40, wrong=40))
    judge_version = simulated_version(model="sim-slow", concurrency=4)
    worker_env = {"VENDOR_SIMULATOR_URL": vendor_simulator.url, "JUDGES_CHUNK_LEASE_S": LEASE_S}
    first = WorkerProcess(extra_env=worker_env).start()
    try:
        run = calibration_run_start(gold_set_version=version, judge_versions=[judge_version], repeats=REPEATS)
        wait_for(
            lambda: Verdict.objects.filter(run=run).count() >= 60,
            timeout=120,
            what=f"the first worker to make verdicts (log: {first.output()[-3000:]})",
        )
        first.kill()
    finally:
        first.stop()
    interrupted = Verdict.objects.filter(run=run).count()
    assert interrupted < ITEMS * REPEATS, "the worker finished before it could be killed"
    assert CalibrationRun.objects.get(pk=run.pk).status == RunStatus.RUNNING

    held = RunChunk.objects.filter(run=run, status=ChunkStatus.RUNNING)
    wait_for(
        lambda: not held.filter(lease_until__gte=timezone.now()).exists(),
        timeout=60,
        what="the killed worker's leases to expire",
    )
    second = WorkerProcess(extra_env=worker_env).start(purge=False)
    try:
        calibration_run_resume(run=run)
        wait_for(
            lambda: CalibrationRun.objects.get(pk=run.pk).status == RunStatus.COMPLETED,
            timeout=180,
            what=f"the resumed run to complete (log: {second.output()[-3000:]})",
        )
    finally:
        second.stop()

    verdicts = Verdict.objects.filter(run=run)
    assert verdicts.count() == ITEMS * REPEATS
    per_slot = verdicts.values("query", "repeat").annotate(n=Count("id"))
    assert per_slot.count() == ITEMS * REPEATS and {row["n"] for row in per_slot} == {1}
    assert not verdicts.filter(decision="error").exists()
    assert verdicts.filter(decision="reject").count() == 40 * REPEATS
    run.refresh_from_db()
    assert run.done_count == ITEMS * REPEATS
