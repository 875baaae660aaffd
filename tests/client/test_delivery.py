"""How the client decides one batch's delivery, answer by answer (pure: no server, no thread)."""

import json
from email.utils import formatdate

import pytest
from docket_client._delivery import (
    ClientStats,
    HttpResult,
    Options,
    Post,
    Sleep,
    backoff_seconds,
    delivery,
    encoded_row,
    retry_after_seconds,
)

ROWS = [encoded_row(question=f"q{n}", sql="SELECT 1", warehouse="shop", external_id=str(n)) for n in range(4)]


def run(answers, rows=ROWS, **options):
    """Drive a delivery with scripted answers; return the steps it took and the counters."""
    stats, steps = ClientStats(), []
    generator = delivery(rows, options=Options(**options), stats=stats)
    answers = iter(answers)
    try:
        step = next(generator)
        while True:
            steps.append(step)
            step = generator.send(next(answers) if isinstance(step, Post) else None)
    except StopIteration:
        pass
    return steps, stats


def answer(status, body=b"{}", **headers):
    return HttpResult(status, {name.replace("_", "-"): value for name, value in headers.items()}, body)


def test_retry_after_is_honoured_in_seconds_or_as_a_date():
    steps, stats = run([answer(503, retry_after="7"), answer(202)])
    assert steps[1] == Sleep(7.0) and stats.sent == 4 and stats["retries"] == 1
    assert 0 <= retry_after_seconds({"retry-after": formatdate(usegmt=True)}) <= 1
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after": "100000"}) == 300, "capped"


def test_backoff_grows_to_its_cap_with_jitter():
    options = Options(backoff_base=1, backoff_max=8)
    assert 0.5 <= backoff_seconds(options, 1) <= 1
    assert 4 <= backoff_seconds(options, 4) <= 8
    assert 4 <= backoff_seconds(options, 10) <= 8


def test_no_answer_is_retried_and_given_up_after_max_retries():
    steps, stats = run([HttpResult(None, {}, error="ConnectionRefusedError")] * 3, max_retries=2)
    assert [type(step) for step in steps] == [Post, Sleep, Post, Sleep, Post]
    assert (stats.failed, stats.retries, stats.sent) == (4, 2, 0)


def test_a_413_halves_the_batch():
    steps, stats = run([answer(413), answer(202), answer(202)])
    assert [len(step.rows) for step in steps] == [4, 2, 2] and stats.sent == 4


def test_a_400_naming_items_rejects_those_and_resends_the_rest():
    body = json.dumps({"detail": "Validation failed", "errors": {"items": {"1": {"sql": ["required"]}}}}).encode()
    steps, stats = run([answer(400, body), answer(202)])
    assert steps[1].rows == [ROWS[0], ROWS[2], ROWS[3]]
    assert (stats.rejected, stats.sent) == (1, 3)


@pytest.mark.parametrize(("status", "counter"), [(400, "rejected"), (401, "failed"), (403, "failed"), (404, "failed")])
def test_an_answer_that_no_retry_can_change_gives_the_batch_up(status, counter):
    steps, stats = run([answer(status, b'{"detail": "no"}')])
    assert len(steps) == 1 and getattr(stats, counter) == 4 and f"HTTP {status}" in stats.last_error


@pytest.mark.parametrize("bad", [{"batch_size": 0}, {"batch_size": 501}, {"max_queue_size": 5}, {"timeout": 0}])
def test_bad_options_are_refused_when_the_client_is_made(bad):
    with pytest.raises(ValueError):
        Options(**bad)


def test_a_row_gets_an_id_and_leaves_out_what_was_not_given():
    row = json.loads(encoded_row(question="q", sql="SELECT 1", warehouse="shop"))
    assert set(row) == {"external_id", "question", "sql", "warehouse"} and len(row["external_id"]) == 32
