"""A real Celery worker process picks up tasks from the configured broker."""

import uuid

import pytest

from config.models import WorkerHeartbeat
from config.tasks import ping
from tests.support.fixtures import wait_for


@pytest.mark.worker
def test_a_real_worker_runs_a_task_against_the_test_database(celery_worker_process):
    token = uuid.uuid4().hex
    ping.delay(token)
    wait_for(
        lambda: WorkerHeartbeat.objects.filter(token=token).exists(),
        timeout=90,
        what=f"the worker to run config.ping (log: {celery_worker_process.output()[-2000:]})",
    )
    assert WorkerHeartbeat.objects.get(token=token).seen_at is not None
