"""The embedded broker never hands a worker a half-written message (kombu issue #1551).

kombu's filesystem writer creates the message file, then writes it; a reader that lists the
folder in between reads an empty file and the worker stops with "Unrecoverable error:
JSONDecodeError". Here the writer pauses in that window (tests/support/brokers.py) so a
polling reader meets it every time: kombu's own transport crashes the real worker, Docket's
(config/transport.py) does not.
"""

import threading
import uuid

import pytest
from django.conf import settings

from config.models import WorkerHeartbeat
from tests.support.brokers import WRITE_WINDOW_S, filesystem_worker_env, send_through
from tests.support.fixtures import WorkerProcess, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.any_app_database]


@pytest.fixture
def broker_folder(tmp_path):
    """A broker folder of its own; made here because kombu's own transport does not make it."""
    folder = tmp_path / "broker"
    for sub in ("in", "processed", "control"):
        (folder / sub).mkdir(parents=True)
    return folder


def start_worker(broker_folder, *, app="config"):
    worker = WorkerProcess(extra_env=filesystem_worker_env(broker_folder), concurrency=1, app=app, name="window")
    return worker.start().wait_until_ready()


def publish_in_background(transport, broker_folder, token):
    """Publish a ping through `transport`, which pauses between creating and writing the file."""
    thread = threading.Thread(target=send_through, args=(transport, broker_folder, "config.ping", token))
    thread.start()
    return thread


def test_kombus_own_transport_crashes_the_worker_on_a_half_written_message(transactional_db, broker_folder):
    worker = start_worker(broker_folder, app="tests.support.stock_filesystem_app")
    try:
        publisher = publish_in_background(
            "tests.support.brokers:StockSlowWriterTransport", broker_folder, uuid.uuid4().hex
        )
        wait_for(lambda: worker.process.poll() is not None, timeout=60, what="kombu's reader to crash the worker")
        publisher.join(timeout=WRITE_WINDOW_S + 30)
        assert "Unrecoverable error: JSONDecodeError" in worker.output()
    finally:
        worker.discard()


def test_docket_transport_waits_for_the_whole_message_and_the_worker_runs_it(transactional_db, broker_folder):
    worker = start_worker(broker_folder)
    try:
        token = uuid.uuid4().hex
        publisher = publish_in_background("tests.support.brokers:DocketSlowWriterTransport", broker_folder, token)
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(token=token).exists(),
            timeout=90,
            what=f"the worker to run the slowly written ping (log: {worker.output()[-2000:]})",
        )
        publisher.join(timeout=30)
        assert worker.process.poll() is None, worker.output()[-3000:]
        assert "Unrecoverable error" not in worker.output()
    finally:
        worker.discard()


def test_an_undecodable_message_file_is_logged_and_set_aside_and_the_worker_goes_on(transactional_db, broker_folder):
    worker = start_worker(broker_folder)
    try:
        # Named as kombu names a message of the worker's queue (celery-gwN under pytest-xdist).
        queue = getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "celery")
        (broker_folder / "in" / f"1_{uuid.uuid4()}.{queue}.msg").write_bytes(b"{not json")
        token = uuid.uuid4().hex
        send_through("config.transport:Transport", broker_folder, "config.ping", token)
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(token=token).exists(),
            timeout=90,
            what=f"the worker to run the ping after the broken file (log: {worker.output()[-2000:]})",
        )
        assert worker.process.poll() is None
        assert "Skipped an unreadable broker message" in worker.output()
        assert [path.read_bytes() for path in (broker_folder / "processed").glob("*.unreadable")] == [b"{not json"]
    finally:
        worker.discard()
