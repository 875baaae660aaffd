"""The live-judge threads stay within the process's connection budget on PostgreSQL (issue 33).

Many judges judge one live query on a pool of many threads; a sampler watches the server's
own count of connections to the test database (pg_stat_activity) the whole time.
"""

import threading

import pytest
from django.db import connection

from judges.models import Verdict
from judges.tests.factories import simulated_version
from simulator import SimModel, Simulator, start_in_thread
from triage import pipeline
from triage.pipeline import judges_run
from triage.tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
BUDGET = 4
THREADS = 32
JUDGES = 24
# Each vendor call takes this long, so the judges overlap and press on the budget.
LAGGED = SimModel(catch_probability=1.0, false_reject_probability=0.0, flip_probability=0.0, latency_ms=150)
OTHERS = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"


@pytest.fixture
def lagged_vendor(settings):
    server, url = start_in_thread(Simulator(models={"sim-lagged": LAGGED}))
    settings.VENDOR_SIMULATOR_URL = url
    yield
    server.shutdown()
    server.server_close()


@pytest.fixture
def wide_pool(settings, monkeypatch):
    """A fresh live-judge pool of THREADS threads under a budget of BUDGET connections."""
    settings.TRIAGE_JUDGE_THREADS = THREADS
    settings.DB_MAX_CONNECTIONS_PER_PROCESS = BUDGET
    monkeypatch.setattr(pipeline, "_judge_pool", None)
    yield
    if pipeline._judge_pool is not None:
        pipeline._judge_pool.shutdown(wait=True)


class ConnectionSampler(threading.Thread):
    """Count the test database's other connections until stopped; keep the highest count."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.peak = 0
        self.samples = 0

    def run(self):
        try:
            with connection.cursor() as cursor:
                while not self.stop.is_set():
                    cursor.execute(OTHERS)
                    self.peak = max(self.peak, cursor.fetchone()[0])
                    self.samples += 1
                    self.stop.wait(0.005)
        finally:
            connection.close()


def test_many_live_judge_threads_never_hold_more_connections_than_the_budget(lagged_vendor, wide_pool):
    versions = [simulated_version(name=f"judge-{i}", model="sim-lagged", timeout_s=10.0) for i in range(JUDGES)]
    query = factories.live_query(sql="SELECT COUNT(*) FROM orders -- sim: correct").query
    sampler = ConnectionSampler()
    sampler.start()
    try:
        verdicts = judges_run(query=query, judge_versions=versions)
    finally:
        sampler.stop.set()
        sampler.join()
    assert len(verdicts) == JUDGES
    assert Verdict.objects.filter(query=query, run__isnull=True).count() == JUDGES
    assert sampler.samples > 10
    # This thread's connection plus the judge threads': never above the budget ...
    assert sampler.peak <= BUDGET
    # ... and the judges did use the database side by side, not one after another.
    assert sampler.peak >= 3
    # Once done, the pool's threads hold no connection at all: only this thread's is left.
    with connection.cursor() as cursor:
        cursor.execute(OTHERS.replace("AND pid <> pg_backend_pid()", ""))
        assert cursor.fetchone()[0] == 1
