"""Nothing the API accepts is lost: a broker outage at ingest leaves rows pending, the sweeper sends them."""

import json
import logging
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.support.brokers import CLOSED_PORT_BROKER, broker_at
from tests.support.fixtures import wait_for
from triage.claims import live_query_claim
from triage.enqueue import live_queries_requeue_stale
from triage.models import IngestStatus, LiveQuery
from triage.tests import factories


def post_queries(client, plaintext, external_ids):
    rows = [{"external_id": e, "question": "q?", "sql": "SELECT 1", "warehouse": "shop"} for e in external_ids]
    return client.post(
        "/api/v1/queries",
        data=json.dumps(rows),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {plaintext}",
    )


@pytest.mark.usefixtures("synchronous_publish")
@pytest.mark.django_db
def test_a_broker_outage_at_ingest_still_stores_every_query_as_pending(
    client, caplog, django_capture_on_commit_callbacks
):
    factories.warehouse("shop")
    _, plaintext = factories.token()
    with (
        broker_at(CLOSED_PORT_BROKER),
        caplog.at_level(logging.ERROR, logger="triage.enqueue"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = post_queries(client, plaintext, ["a", "b", "c"])
    assert response.status_code == 202
    stored = LiveQuery.objects.all()
    assert stored.count() == 3
    assert set(stored.values_list("status", flat=True)) == {IngestStatus.PENDING}
    assert not stored.filter(enqueued_at__isnull=False).exists()
    assert "could not publish" in caplog.text


@pytest.mark.usefixtures("synchronous_publish")
@pytest.mark.django_db
def test_the_sweeper_resends_pending_queries_once_the_broker_is_back(client, django_capture_on_commit_callbacks):
    factories.warehouse("shop")
    _, plaintext = factories.token()
    with broker_at(CLOSED_PORT_BROKER), django_capture_on_commit_callbacks(execute=True):
        post_queries(client, plaintext, ["a", "b"])
    assert LiveQuery.objects.filter(enqueued_at__isnull=True).count() == 2
    call_command("requeue_pending", minutes=0)
    assert list(LiveQuery.objects.values_list("enqueue_attempts", flat=True)) == [2, 2]
    assert LiveQuery.objects.filter(enqueued_at__isnull=False).count() == 2


@pytest.mark.worker
def test_queries_ingested_during_an_outage_are_judged_after_it(client, celery_worker_process):
    factories.warehouse("shop")
    factories.quiet_policy()
    _, plaintext = factories.token()
    with broker_at(CLOSED_PORT_BROKER):
        response = post_queries(client, plaintext, [f"outage-{i}" for i in range(5)])
    assert response.status_code == 202
    assert LiveQuery.objects.filter(status=IngestStatus.PENDING).count() == 5
    call_command("requeue_pending", minutes=0)
    wait_for(
        lambda: LiveQuery.objects.filter(status=IngestStatus.PASSED).count() == 5,
        timeout=90,
        what=f"the worker to process all five (log: {celery_worker_process.output()[-2000:]})",
    )


@pytest.mark.django_db
def test_a_query_left_processing_is_resent_only_after_the_processing_timeout(settings):
    settings.TRIAGE_PROCESSING_TIMEOUT_S = 300
    live = factories.live_query(status=IngestStatus.PROCESSING)
    LiveQuery.objects.filter(pk=live.pk).update(started_at=timezone.now() - timedelta(seconds=200))
    # Still within its time: perhaps a slow judge. Neither the sweeper nor a redelivery takes it.
    assert live_queries_requeue_stale(older_than=timedelta(0)) == 0
    assert not live_query_claim(live_id=live.pk, token="another-task")
    LiveQuery.objects.filter(pk=live.pk).update(started_at=timezone.now() - timedelta(seconds=400))
    # Its worker is gone: the sweeper re-sends it and the task that gets it takes over.
    assert live_queries_requeue_stale(older_than=timedelta(0)) == 1
    assert live_query_claim(live_id=live.pk, token="another-task")
