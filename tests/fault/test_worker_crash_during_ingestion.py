"""SIGKILL the Celery worker in the middle of a burst of live ingestion, then restart it.

Runs on whatever the suite is configured with: SQLite and the filesystem broker (which
loses the messages a dead worker had taken) or PostgreSQL and Redis (which keeps them
unacknowledged for an hour). Either way every query must reach its right final state,
exactly once, through redelivery or the sweeper.
"""

import pytest
from django.utils import timezone

from tests.fault import ingestion
from tests.support.fixtures import wait_for

BATCH = 10
BEFORE_CRASH = 100
AFTER_CRASH = 100


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_every_query_of_a_burst_reaches_its_final_state_once_when_the_worker_is_killed_mid_burst(
    client, tmp_path, monkeypatch
):
    token = ingestion.realistic_pipeline(tmp_path, monkeypatch)
    worker = ingestion.start_worker()
    try:
        for start in range(0, BEFORE_CRASH, BATCH):
            ingestion.post(client, token, ingestion.rows("burst", start, BATCH))
        wait_for(lambda: ingestion.final_count() >= 15, timeout=120, what="the worker to get going")
        worker.kill()
        crashed_at = timezone.now()
        done_at_crash = ingestion.final_count()
        assert done_at_crash < BEFORE_CRASH, "the worker finished before it was killed: nothing was interrupted"

        # The web side keeps accepting while no worker runs; a client retries two batches.
        for start in range(BEFORE_CRASH, BEFORE_CRASH + AFTER_CRASH, BATCH):
            ingestion.post(client, token, ingestion.rows("burst", start, BATCH))
        for start in (20, 150):
            retried = ingestion.post(client, token, ingestion.rows("burst", start, BATCH))
            assert not any(entry["created"] for entry in retried)

        worker = ingestion.start_worker(purge=False)
        ingestion.recover_as_beat_would(orphaned_before=crashed_at, total=BEFORE_CRASH + AFTER_CRASH)
    finally:
        worker.stop()
    ingestion.assert_each_query_final_right_and_single(BEFORE_CRASH + AFTER_CRASH)
