"""The broker is unreachable from the web side during a burst of ingestion.

The API must keep accepting and storing; once the broker is back, the beat-scheduled
sweeper task, executed by a real worker, re-publishes everything and the worker judges it.
(triage's own test covers the command-line sweep of a few queries; this is the burst,
the full pipeline and the production path through `triage.requeue_pending`.)
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.fault import ingestion
from tests.support.brokers import CLOSED_PORT_BROKER, broker_at
from tests.support.fixtures import wait_for
from triage.models import IngestStatus, LiveQuery
from triage.tasks import requeue_pending

BATCH = 10
BEFORE_OUTAGE = 30
DURING_OUTAGE = 90


@pytest.mark.usefixtures("synchronous_publish")
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_queries_posted_while_the_broker_is_down_are_stored_and_all_judged_once_it_is_back(
    client, tmp_path, monkeypatch
):
    token = ingestion.realistic_pipeline(tmp_path, monkeypatch)
    total = BEFORE_OUTAGE + DURING_OUTAGE
    worker = ingestion.start_worker()
    try:
        for start in range(0, BEFORE_OUTAGE, BATCH):
            ingestion.post(client, token, ingestion.rows("outage", start, BATCH))

        with broker_at(CLOSED_PORT_BROKER):
            for start in range(BEFORE_OUTAGE, total, BATCH):
                accepted = ingestion.post(client, token, ingestion.rows("outage", start, BATCH))
                assert all(entry["created"] and entry["status"] == "pending" for entry in accepted)
            retried = ingestion.post(client, token, ingestion.rows("outage", BEFORE_OUTAGE, BATCH))
            assert not any(entry["created"] for entry in retried)

        stranded = LiveQuery.objects.filter(
            query__external_id__in=[r["external_id"] for r in ingestion.rows("outage", BEFORE_OUTAGE, DURING_OUTAGE)]
        )
        assert stranded.count() == DURING_OUTAGE
        assert not stranded.filter(enqueued_at__isnull=False).exists(), "no publish can have succeeded"
        wait_for(
            lambda: ingestion.final_count() == BEFORE_OUTAGE, timeout=120, what="the queries sent before the outage"
        )
        assert set(stranded.values_list("status", flat=True)) == {IngestStatus.PENDING}

        # Beat fires the sweeper once the outage is older than its two-minute threshold.
        LiveQuery.objects.filter(status=IngestStatus.PENDING).update(created_at=timezone.now() - timedelta(minutes=3))
        requeue_pending.delay()
        wait_for(lambda: ingestion.final_count() == total, timeout=120, what=f"all {total} queries to be judged")
    finally:
        worker.stop()
    ingestion.assert_each_query_final_right_and_single(total)
    assert set(stranded.values_list("enqueue_attempts", flat=True)) == {2}, "each was re-sent exactly once"
