"""The Python client (clients/python) against a running Docket server, through a recording proxy."""

import asyncio
import logging
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from docket_client import AsyncDocketClient, DocketClient

from tests.client.conftest import CLIENT_SOURCE
from tests.client.proxy import RecordingProxy
from tests.support.fixtures import wait_for
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = pytest.mark.django_db(transaction=True)
FAST = {"backoff_base": 0.05, "backoff_max": 0.2, "timeout": 5}


@pytest.fixture
def docket(live_server):
    """A running Docket with the `shop` warehouse behind a recording proxy; yields (proxy, token)."""
    factories.warehouse("shop")
    _, plaintext = factories.token(scopes=("ingest",))
    proxy = RecordingProxy(live_server.url).start()
    yield proxy, plaintext
    proxy.stop()


def log(client, count, prefix="q", **extra):
    return [
        client.log_query(
            question=f"Question {n}?", sql=f"SELECT {n}", warehouse="shop", external_id=f"{prefix}-{n}", **extra
        )
        for n in range(count)
    ]


def stored_ids():
    return set(LiveQuery.objects.values_list("external_id", flat=True))


def test_queries_arrive_in_batches_of_the_size_set(docket):
    proxy, token = docket
    client = DocketClient(proxy.url, token, batch_size=10, flush_interval=30, **FAST)
    attempts = [{"tier": "small", "failure_class": "syntax"}, {"tier": "large", "tokens": 120}]
    assert all(log(client, 25, attempts=attempts))
    wait_for(lambda: len(proxy.posts) == 2, timeout=10, what="the two full batches")
    assert client.flush(timeout=10)
    assert proxy.posts == [10, 10, 5]
    assert stored_ids() == {f"q-{n}" for n in range(25)}
    assert LiveQuery.objects.get(external_id="q-3").attempts.count() == 2
    assert client.stats.as_dict() | {"last_error": ""} == {
        "queued": 25,
        "sent": 25,
        "dropped": 0,
        "rejected": 0,
        "failed": 0,
        "retries": 0,
        "last_error": "",
    }
    client.close()


def test_a_server_503_is_retried_then_delivered_honouring_retry_after(docket):
    proxy, token = docket
    proxy.refuse_next = [(503, {"Retry-After": "0"}), (503, {}), (429, {"Retry-After": "0"})]
    client = DocketClient(proxy.url, token, batch_size=50, **FAST)
    log(client, 5)
    assert client.flush(timeout=10)
    assert proxy.refused == [503, 503, 429] and proxy.posts == [5]
    assert stored_ids() == {f"q-{n}" for n in range(5)}
    assert client.stats.retries == 3 and client.stats.sent == 5
    client.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_refused_connection_is_retried_until_the_server_is_there(live_server):
    factories.warehouse("shop")
    _, token = factories.token(scopes=("ingest",))
    port = free_port()
    client = DocketClient(f"http://127.0.0.1:{port}", token, max_retries=50, **FAST)
    log(client, 3)
    client.flush(timeout=0)
    wait_for(lambda: client.stats.retries >= 2, timeout=10, what="retries against a closed port")
    assert "ConnectionRefusedError" in client.stats.last_error
    proxy = RecordingProxy(live_server.url, port=port).start()
    try:
        assert client.flush(timeout=15)
        assert stored_ids() == {"q-0", "q-1", "q-2"}
    finally:
        client.close()
        proxy.stop()


def test_the_caller_never_sees_an_exception_and_each_problem_is_counted(docket, caplog):
    proxy, token = docket
    caplog.set_level(logging.WARNING, logger="docket_client")
    proxy.refuse_next = [(503, {})] * 3  # keeps the first batch in its retries while the queue fills
    client = DocketClient(proxy.url, token, batch_size=2, max_queue_size=2, flush_interval=60, **FAST)
    assert client.log_query(question="q", sql="SELECT 1", warehouse="shop", metadata={"when": object()}) is False
    assert log(client, 2) == [True, True]
    wait_for(lambda: client.stats.retries >= 1, timeout=10, what="the first batch to be retried")
    assert log(client, 3, prefix="more") == [True, True, False], "a full queue refuses the newest query"
    assert client.flush(timeout=10)
    assert (client.stats.rejected, client.stats.dropped, client.stats.sent) == (1, 1, 4)
    assert stored_ids() == {"q-0", "q-1", "more-0", "more-1"}

    bad = DocketClient(proxy.url, "dkt_wrong", **FAST)
    log(bad, 2, prefix="bad")
    assert bad.flush(timeout=10)
    assert bad.stats.failed == 2 and "HTTP 401" in bad.stats.last_error
    assert any("not accepted" in record.getMessage() for record in caplog.records)
    client.close()
    bad.close()
    assert client.log_query(question="q", sql="SELECT 1", warehouse="shop") is False, "closed: dropped, not raised"


def test_invalid_items_are_rejected_and_the_rest_of_the_batch_delivered(docket):
    proxy, token = docket
    client = DocketClient(proxy.url, token, batch_size=10, **FAST)
    log(client, 3)
    client.log_query(question="Where?", sql="SELECT 9", warehouse="nowhere", external_id="lost")
    assert client.flush(timeout=10)
    assert stored_ids() == {"q-0", "q-1", "q-2"}
    assert (client.stats.rejected, client.stats.sent) == (1, 3) and "nowhere" in client.stats.last_error
    client.close()


def test_close_flushes_what_waits_for_its_interval(docket):
    proxy, token = docket
    client = DocketClient(proxy.url, token, batch_size=100, flush_interval=3600, **FAST)
    log(client, 7)
    assert proxy.posts == []
    assert client.close(timeout=10)
    assert proxy.posts == [7] and len(stored_ids()) == 7


def test_the_asyncio_client_batches_retries_and_flushes_on_close(docket):
    proxy, token = docket
    proxy.refuse_next = [(502, {})]

    async def application():
        async with AsyncDocketClient(proxy.url, token, batch_size=4, flush_interval=3600, **FAST) as client:
            assert all(log(client, 10))
            assert await client.flush(timeout=10)
            log(client, 2, prefix="late")
            queued = await client.log_query(question="Awaited?", sql="SELECT 1", warehouse="shop", external_id="late-2")
            assert queued is True, "log_query may be awaited too, and never waits"
            stats = client.stats
        return stats

    # A thread of its own: the browser tests' Playwright (sync API) leaves an event loop
    # running in the main thread of the process, where asyncio.run() refuses to start.
    with ThreadPoolExecutor(max_workers=1) as thread:
        stats = thread.submit(asyncio.run, application()).result(timeout=120)
    assert proxy.refused == [502] and sorted(proxy.posts) == [2, 3, 4, 4]
    assert len(stored_ids()) == 13
    assert (stats.sent, stats.retries, stats.failed) == (13, 1, 0)


def test_the_client_imports_without_django():
    code = "import sys, docket_client; assert not any(m.startswith('django') for m in sys.modules), sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(CLIENT_SOURCE)}, check=True, timeout=60)
