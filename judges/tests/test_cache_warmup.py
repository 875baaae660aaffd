"""The first call goes alone to warm the vendor's prompt cache only when the prefix can be cached.

Issue 33, item 6: a prefix below the vendor's minimum cacheable length is never cached, so
holding its siblings back behind the first call only adds that call's latency.
"""

import threading

import pytest

from judges.backends import get_backend
from judges.backends.cache_minimums import anthropic_cache_minimum, prefix_may_be_cached
from judges.tests.factories import simulated_version
from labelling.models import Query
from simulator import SimModel

pytestmark = pytest.mark.django_db

# Long enough to reach the Sonnet-like minimum (1,024 tokens) the simulator applies.
LONG_TEMPLATE = "Review the SQL against the question; answer with the tool.\n" * 90
# Each call is held this long by the simulator, so calls sent together overlap there.
LAGGED = SimModel(
    family="simulated", catch_probability=1.0, false_reject_probability=0.0, flip_probability=0.0, latency_ms=600
)
SQLS = ["SELECT COUNT(*) FROM orders -- sim: correct", "SELECT COUNT(*) FROM customers -- sim: correct"]


def judge_together(judge, sqls):
    """Send one call per SQL from as many threads, released at the same moment."""
    barrier = threading.Barrier(len(sqls))
    results = {}

    def one(sql):
        barrier.wait()
        results[sql] = judge.judge(Query(question="How many?", sql=sql, dialect="sqlite", external_id=sql))

    threads = [threading.Thread(target=one, args=(sql,)) for sql in sqls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [results[sql] for sql in sqls]


@pytest.fixture
def lagged_judge(vendor_simulator):
    vendor_simulator.models["sim-lagged"] = LAGGED

    def build(backend, template=None):
        version = simulated_version(backend=backend, model="sim-lagged", timeout_s=10.0)
        if template:
            version.prompt_template = template
            version.save()
        return get_backend(version)

    return build


@pytest.mark.parametrize("backend", ["anthropic", "openai_compatible"])
def test_calls_whose_prefix_cannot_be_cached_are_all_sent_at_once(vendor_simulator, lagged_judge, backend):
    results = judge_together(lagged_judge(backend), SQLS)
    assert [r.decision for r in results] == ["accept", "accept"]
    # The vendor confirms the prefix was below its minimum: no call could have read a cache.
    assert vendor_simulator.stats["cache:too_short"] == 2
    assert all(r.cache_read_tokens == 0 and r.cache_write_tokens == 0 for r in results)
    # Neither call waited for the other: both were at the vendor at the same time.
    assert vendor_simulator.stats["max_in_flight"] == 2


def test_calls_whose_prefix_can_be_cached_still_wait_for_the_first_to_write_it(vendor_simulator, lagged_judge):
    results = judge_together(lagged_judge("anthropic", LONG_TEMPLATE), SQLS)
    assert vendor_simulator.stats["max_in_flight"] == 1
    writes = sorted(r.cache_write_tokens for r in results)
    reads = sorted(r.cache_read_tokens for r in results)
    assert writes[0] == 0 and writes[1] > 0
    assert reads == [0, writes[1]]


def test_the_minimum_follows_the_model_family_and_tokens_are_over_counted():
    assert anthropic_cache_minimum("claude-sonnet-4-5") == 1024
    assert anthropic_cache_minimum("claude-3-5-haiku-latest") == 2048
    assert anthropic_cache_minimum("sim-perfect") == 1024
    # 4,500 characters: about 1,125 tokens of prose, 1,500 by the generous count.
    prefix = {"system": [{"type": "text", "text": "x" * 4500}]}
    assert prefix_may_be_cached(prefix, 1024)
    assert not prefix_may_be_cached(prefix, 2048)
    assert not prefix_may_be_cached({"system": [{"type": "text", "text": "short"}]}, 1024)
