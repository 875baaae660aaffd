"""The report's packed verdict fetch returns every verdict's numbers, packed or not (SQLite and PostgreSQL)."""

import numpy as np
import pytest

from judges.calibration_data import fetch_verdict_costs, selected_run_ids
from judges.metrics import DECISION_CODES
from judges.models import Verdict
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from judges.verdict_rows import DRAW_RUN_SHIFT, fetch_verdict_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    version = make_gold_set("rows", labels(3, 3))
    first, second = make_run(version, repeats=2), make_run(version, label="second")
    alpha, beta = make_judge_version("alpha"), make_judge_version("beta")
    add_verdicts(first, alpha, ["reject", "accept", "error", "accept", "reject", "accept"], latency=120.5)
    add_verdicts(first, alpha, ["reject", "reject", "accept", "accept", "accept", None], repeat=1, latency=None)
    add_verdicts(second, beta, ["error", "reject", "accept", "reject", "accept", "accept"], latency=lambda i: 10.0 * i)
    return selected_run_ids(version)


def stored_rows(run_ids):
    """The same numbers read through the ORM, one tuple per verdict, sorted."""
    stored = Verdict.objects.filter(run_id__in=run_ids).values_list(
        "query_id", "judge_version_id", "decision", "run_id", "repeat", "latency_ms"
    )
    return sorted(
        (query, judge, DECISION_CODES[decision], (run << DRAW_RUN_SHIFT) + repeat, -1.0 if latency is None else latency)
        for query, judge, decision, run, repeat, latency in stored
    )


def fetched_rows(fetched):
    query_ids, judge_ids, codes, draw_key, latency = fetched
    latency = np.where(np.isnan(latency), -1.0, latency)
    columns = (query_ids.tolist(), judge_ids.tolist(), codes.tolist(), draw_key.tolist(), latency.tolist())
    return sorted(zip(*columns, strict=True))


def test_packed_and_unpacked_fetches_return_every_verdicts_numbers(runs):
    packed = fetch_verdict_rows(runs, max_judge_version_id=max(fetch_verdict_costs(runs)))
    unpacked = fetch_verdict_rows(runs, max_judge_version_id=2**23)
    assert fetched_rows(packed) == fetched_rows(unpacked) == stored_rows(runs)
    assert set(packed[2].tolist()) == {0, 1, 2}
    # A latency that was not measured is NaN, never a number.
    assert np.isnan(packed[4]).sum() == 5


def test_no_runs_fetch_no_rows():
    assert all(len(column) == 0 for column in fetch_verdict_rows([], max_judge_version_id=0))


@pytest.mark.parametrize("off_by", [-4, -1, 0, 3])
def test_a_wrong_row_count_still_fetches_every_verdict(runs, off_by, monkeypatch):
    """The count given to fill the columns in place may be stale (verdicts written meanwhile): every row still comes."""
    monkeypatch.setattr("judges.verdict_rows.CHUNK_ROWS", 2)  # chunks of two rows: the count is crossed mid-fetch
    count = Verdict.objects.filter(run_id__in=runs).count()
    fetched = fetch_verdict_rows(runs, max(fetch_verdict_costs(runs)), expected_rows=count + off_by)
    assert fetched_rows(fetched) == stored_rows(runs)


def test_decision_codes_are_one_byte(runs):
    """Five million verdicts hold their codes in 5 MB, not 40 (the report's memory bound)."""
    assert fetch_verdict_rows(runs, max(fetch_verdict_costs(runs)))[2].dtype == np.int8
