"""Helpers for the ingestion fault tests: a realistic pipeline, bursts through the API, recovery.

The policy runs no judges (so these tests need no vendor) but runs the deterministic
verifier and the fan-out detector against a real SQLite warehouse, so every query takes
the pipeline's real path and has a known right outcome.
"""

import json
import time
from datetime import timedelta
from urllib.parse import urlparse

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from labelling.models import Query, QuerySource
from tests.support.fixtures import WorkerProcess, wait_for
from tests.support.services import port_is_open, require
from triage.enqueue import live_queries_requeue_stale
from triage.models import IngestStatus, LiveQuery, TriageItem, TriageProbe
from triage.policy import policy_publish
from triage.tests import factories

FINAL = (IngestStatus.FLAGGED, IngestStatus.PASSED, IngestStatus.UNJUDGED)
# Each SQL with the status the pipeline must give it: a confirmed fan-out, a clean query,
# and one the verifier fails (unknown column).
MIX = [
    (factories.FANOUT_SQL, IngestStatus.FLAGGED),
    (factories.CLEAN_SQL, IngestStatus.PASSED),
    (factories.UNKNOWN_COLUMN_SQL, IngestStatus.FLAGGED),
]


def realistic_pipeline(tmp_path, monkeypatch) -> str:
    """Set up the fan-out trap warehouse and a judge-free policy; return an API token."""
    factories.fanout_trap_warehouse(tmp_path / "shop.sqlite3", monkeypatch)
    policy_publish(
        changes={"run_verifier": True, "run_fanout_detector": True, "flag_on_verifier_failure": True},
        judge_versions=[],
    )
    _, plaintext = factories.token()
    return plaintext


def rows(prefix: str, start: int, count: int) -> list[dict]:
    return [
        {
            "external_id": f"{prefix}-{n}",
            "question": f"Question {n}?",
            "sql": MIX[n % len(MIX)][0],
            "warehouse": "shop",
        }
        for n in range(start, start + count)
    ]


def expected_status(external_id: str) -> str:
    return MIX[int(external_id.rsplit("-", 1)[1]) % len(MIX)][1]


def post(client, token: str, batch: list[dict]):
    response = client.post(
        "/api/v1/queries", data=json.dumps(batch), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert response.status_code == 202, response.content[:500]
    return response.json()


def final_count() -> int:
    return LiveQuery.objects.filter(status__in=FINAL).count()


def require_broker() -> None:
    """Skip (locally) or fail (CI) when the configured broker is a server that does not answer."""
    url = urlparse(settings.CELERY_BROKER_URL)
    if url.scheme in ("redis", "rediss", "amqp"):
        port = url.port or {"amqp": 5672}.get(url.scheme, 6379)
        require(port_is_open(url.hostname or "127.0.0.1", port), f"the broker at {url.hostname}:{port}")


def start_worker(*, purge: bool = True) -> WorkerProcess:
    """Start a worker and wait until it consumes (its start-up is not mistaken for a stall).

    `purge=False` keeps the messages already queued: a restart after a crash must find them.
    """
    require_broker()
    # The filesystem broker is polled; once a second would make a burst of 200 take minutes.
    worker = WorkerProcess(extra_env={"DOCKET_BROKER_POLL_S": "0.05"}).start(purge=purge)
    wait_for(lambda: " ready." in worker.output(), timeout=60, what="the worker to be ready")
    return worker


def wait_until_quiet(*, total: int, seconds: float = 3.0, timeout: float = 120.0) -> None:
    """Wait until no live query changes status for `seconds`: the worker has done what it can.

    Return as soon as all `total` are final: then nothing is left to wait for (whatever is
    still in flight finishes before the caller's warm `stop()`, ahead of its assertions).
    """
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = dict(LiveQuery.objects.values_list("status").annotate(n=Count("pk")).order_by())
        if sum(n for status, n in now.items() if status in FINAL) == total:
            return
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return
        time.sleep(0.3)


def recover_as_beat_would(*, orphaned_before, total: int, rounds: int = 5) -> int:
    """Run the sweeper until every live query is final; return how many sweeps it took.

    Production's beat runs the sweeper every minute; a row a dead worker left `processing`
    is taken over once its claim is ten minutes old. Here time moves on explicitly: claims
    started before the crash (`orphaned_before`) are aged past that window, then swept.
    """
    for sweep in range(rounds):
        wait_until_quiet(total=total)
        if final_count() == total:
            return sweep
        LiveQuery.objects.filter(status=IngestStatus.PROCESSING, started_at__lt=orphaned_before).update(
            started_at=timezone.now() - timedelta(minutes=15)
        )
        live_queries_requeue_stale(older_than=timedelta(0))
    wait_for(lambda: final_count() == total, timeout=60, what=f"all {total} live queries to be final")
    return rounds


def assert_each_query_final_right_and_single(total: int) -> None:
    """Every ingested query is final with the right outcome, and nothing exists twice."""
    live = list(LiveQuery.objects.values_list("query__external_id", "status"))
    assert len(live) == total
    wrong = [(ext, status) for ext, status in live if status != expected_status(ext)]
    assert not wrong, f"queries with the wrong or no final state: {wrong[:10]}"
    queries = Query.objects.filter(source=QuerySource.LIVE)
    assert queries.count() == queries.values("external_id").distinct().count() == total
    flagged = LiveQuery.objects.filter(status=IngestStatus.FLAGGED)
    assert TriageItem.objects.count() == flagged.count()
    fanouts = flagged.filter(query__sql=factories.FANOUT_SQL)
    assert TriageProbe.objects.filter(live_query__in=fanouts).count() == fanouts.count()
    audited = LiveQuery.objects.filter(audit_query__isnull=False).count()
    assert Query.objects.filter(source=QuerySource.AUDIT).count() == audited
