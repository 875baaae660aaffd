"""The web process's background publisher: one broker message for the posts of an interval.

These tests read the messages off the real broker of the test run (the filesystem
broker, or Redis in the PostgreSQL pass) and, for the fan-out, run a real worker.
"""

import json
import logging
import os
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from config.celery import app
from tests.support.brokers import CLOSED_PORT_BROKER, broker_at
from tests.support.fixtures import wait_for
from triage.ingest import live_queries_ingest
from triage.models import IngestStatus, LiveQuery
from triage.publishing import LiveQueryPublisher
from triage.tests import factories


def broker_messages(wait_s: float = 0.5) -> list[tuple[str, list]]:
    """Take every message off the triage queue: (task name, its positional args)."""
    taken = []
    with app.connection_for_write() as connection:
        simple = connection.SimpleQueue(settings.APP_QUEUES["triage"])
        try:
            while True:
                message = simple.get(block=True, timeout=wait_s)
                body = message.payload if not isinstance(message.payload, (bytes, str)) else json.loads(message.payload)
                taken.append((message.headers["task"], body[0]))
                message.ack()
        except queue.Empty:
            pass
        finally:
            simple.close()
    return taken


@pytest.fixture
def empty_queue():
    broker_messages(wait_s=0.05)
    yield
    broker_messages(wait_s=0.05)


def test_a_post_after_a_quiet_spell_leaves_at_once_and_the_next_ones_share_a_message(empty_queue):
    publisher = LiveQueryPublisher(interval_s=0.5)
    publisher.submit([1])
    wait_for(lambda: not publisher._pending, timeout=5, what="the first id to be taken at once")
    started = time.monotonic()
    publisher.submit([2])
    publisher.submit([3, 4])
    messages = broker_messages(wait_s=1.5)
    assert messages == [
        ("triage.process_live_query", [1]),
        ("triage.process_live_queries", [[2, 3, 4]]),
    ]
    assert time.monotonic() - started >= 0.3, "the second message waited for the interval"


def test_flush_publishes_what_is_buffered_from_the_calling_thread(empty_queue):
    publisher = LiveQueryPublisher(interval_s=60)
    publisher._last_sent = time.monotonic()  # as if a message had just left: the thread waits
    publisher.submit([7, 8])
    assert publisher.flush() == 2
    assert broker_messages() == [("triage.process_live_queries", [[7, 8]])]


def test_a_process_exiting_right_after_handing_over_ids_still_sends_them(empty_queue):
    """A management command or a recycled web worker exits mid-interval: nothing stays behind."""
    code = (
        "import django; django.setup()\n"
        "from triage.publishing import publisher\n"
        "publisher().submit([41])\n"
        "publisher().submit([42, 43])\n"  # waits for an interval the process does not live to see
    )
    env = dict(
        os.environ, DOCKET_TESTING="1", TRIAGE_PUBLISH_INTERVAL_MS="5000", DJANGO_SETTINGS_MODULE="config.settings"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], env=env, cwd=root, check=True, timeout=60)
    sent = sorted(i for _, args in broker_messages() for i in (args[0] if isinstance(args[0], list) else args))
    assert sent == [41, 42, 43]


@pytest.mark.django_db(transaction=True)
def test_a_failed_background_publish_leaves_the_queries_pending_for_the_sweeper(caplog, empty_queue):
    factories.warehouse("shop")
    ingested = live_queries_ingest(
        rows=[{"external_id": f"b-{i}", "question": "q?", "sql": "SELECT 1", "warehouse": "shop"} for i in range(3)]
    )
    ids = [entry.live.pk for entry in ingested]
    publisher = LiveQueryPublisher(interval_s=0.01)
    with broker_at(CLOSED_PORT_BROKER), caplog.at_level(logging.ERROR, logger="triage.enqueue"):
        publisher.submit(ids)
        # The queries are unpublished from the start, so only the logged failure shows the
        # publisher has tried (and given up on) the broker.
        wait_for(lambda: "could not publish" in caplog.text, timeout=30, what="the failed publish to be logged")
    assert LiveQuery.objects.filter(pk__in=ids, enqueued_at__isnull=True).count() == 3
    assert set(LiveQuery.objects.filter(pk__in=ids).values_list("status", flat=True)) == {IngestStatus.PENDING}
    assert publisher._thread.is_alive(), "one failure does not stop the publisher"


@pytest.mark.worker
def test_posts_published_in_the_background_are_all_judged_by_a_worker(client, celery_worker_process, settings):
    settings.TRIAGE_PUBLISH_INTERVAL_MS = 200
    factories.warehouse("shop")
    factories.quiet_policy()
    _, plaintext = factories.token()
    for index in range(6):
        response = client.post(
            "/api/v1/queries",
            data=json.dumps({"external_id": f"bg-{index}", "question": "q?", "sql": "SELECT 1", "warehouse": "shop"}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {plaintext}",
        )
        assert response.status_code == 202
    wait_for(
        lambda: LiveQuery.objects.filter(status=IngestStatus.PASSED).count() == 6,
        timeout=90,
        what=f"the worker to judge all six (log: {celery_worker_process.output()[-2000:]})",
    )
