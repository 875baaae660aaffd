"""The report loads verdicts from the database and computes every figure with judges.metrics."""

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judges.calibration_data import load_calibration
from judges.models import RunStatus
from judges.report import build_report, ensembles_up_to
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from judges.verdict_sums import record_verdict_sums
from labelling.taxonomy import taxonomy_default

pytestmark = pytest.mark.django_db

REQUIRED_JUDGE_KEYS = {
    "name",
    "version",
    "verdicts",
    "errors",
    "unjudged",
    "catch_rate",
    "catch_rate_ci95",
    "false_reject_rate",
    "false_reject_rate_ci95",
    "flag_rate",
    "flip_rate",
    "catch_rate_by_error_class",
    "cost_per_verdict_usd",
    "attempts_per_accepted",
    "cost_per_accepted_usd",
    "break_even_error_cost_usd",
    "latency_ms_p50",
    "latency_ms_p95",
}
REQUIRED_PAIR_KEYS = {"a", "b", "both_missed", "miss_jaccard", "union_catch_rate", "union_false_reject_rate", "kappa"}


@pytest.fixture
def small_calibration():
    """4 wrong + 4 correct items; judge `alpha` over two repeats, `beta` with errors."""
    version = make_gold_set("small", labels(4, 4))
    run = make_run(version, repeats=2)
    alpha = make_judge_version("alpha")
    beta = make_judge_version("beta", simulated=True)
    R, A, E = "reject", "accept", "error"
    add_verdicts(run, alpha, [R, R, A, A, R, A, A, A], repeat=0, cost="0.01", latency=100)
    add_verdicts(run, alpha, [R, A, A, A, A, A, A, A], repeat=1, cost="0.01", latency=300)
    add_verdicts(run, beta, [E, R, R, A, A, A, R, A], repeat=0, cost="0.02", latency=lambda i: 50.0 * (i + 1))
    return version


def test_report_has_the_contract_shape(small_calibration):
    report = build_report(gold_set_version=small_calibration)
    assert report["gold_set"] == "small" and report["version"] == 1
    assert report["items"] == {"total": 8, "wrong": 4, "correct": 4}
    assert [(j["name"], j["version"]) for j in report["judges"]] == [("alpha", 1), ("beta", 1)]
    for judge in report["judges"]:
        assert set(judge) >= REQUIRED_JUDGE_KEYS
    assert len(report["pairs"]) == 1 and set(report["pairs"][0]) >= REQUIRED_PAIR_KEYS


def test_report_figures_follow_the_definitions_with_repeats_and_errors(small_calibration):
    alpha, beta = build_report(gold_set_version=small_calibration, generation_cost_usd=0.01)["judges"]
    # alpha reject_prob on wrong items: 1, 1/2, 0, 0; on correct: 1/2, 0, 0, 0.
    assert alpha["catch_rate"] == pytest.approx(0.375)
    assert alpha["false_reject_rate"] == pytest.approx(0.125)
    assert alpha["flag_rate"] == pytest.approx(0.25)
    assert alpha["flip_rate"] == pytest.approx(2 / 8)
    assert alpha["verdicts"] == 16 and alpha["errors"] == 0
    assert alpha["cost_per_verdict_usd"] == pytest.approx(0.01)
    assert alpha["cost_per_accepted_usd"] == pytest.approx(0.02 / 0.75)
    assert alpha["latency_ms_p50"] == pytest.approx(200.0)
    # beta's first item is an error: unjudged, counted, and outside the rates.
    assert beta["errors"] == 1 and beta["unjudged"] == 1 and beta["simulated"] is True
    assert beta["catch_rate"] == pytest.approx(2 / 3)
    assert beta["false_reject_rate"] == pytest.approx(1 / 4)
    assert beta["flip_rate"] is None
    assert beta["latency_ms_p95"] == pytest.approx(np.percentile([50.0 * (i + 1) for i in range(8)], 95))


def test_pairs_use_items_both_judges_judged(small_calibration):
    (pair,) = build_report(gold_set_version=small_calibration)["pairs"]
    # Wrong items 1..3 judged by both, on their one aligned draw (beta has one verdict per
    # item, so alpha's repeat 0 pairs with it): alpha misses 0, 1, 1; beta misses 0, 0, 1.
    assert (pair["missed_a"], pair["missed_b"]) == (2.0, 1.0)
    assert pair["both_missed"] == pytest.approx(1.0)
    assert pair["miss_jaccard"] == pytest.approx(1.0 / (2 + 1 - 1))
    assert pair["union_catch_rate"] == pytest.approx((1 + 1 + 0) / 3)


def test_only_completed_runs_count_unless_runs_are_named(small_calibration):
    other = make_run(small_calibration, label="half-done", status=RunStatus.STOPPED_BUDGET)
    add_verdicts(other, make_judge_version("gamma"), ["reject"] * 8)
    default = build_report(gold_set_version=small_calibration)
    assert [j["name"] for j in default["judges"]] == ["alpha", "beta"]
    named = build_report(gold_set_version=small_calibration, run_ids=[other.pk])
    assert [j["name"] for j in named["judges"]] == ["gamma"]


def test_break_even_is_priced_against_the_baseline(small_calibration):
    report = build_report(gold_set_version=small_calibration, generation_cost_usd=0.01, baseline="alpha")
    alpha, beta = report["judges"]
    assert alpha["break_even_error_cost_usd"] is None
    expected = (beta["cost_per_accepted_usd"] - alpha["cost_per_accepted_usd"]) / (
        0.5 * (beta["catch_rate"] - alpha["catch_rate"])
    )
    assert beta["break_even_error_cost_usd"] == pytest.approx(expected)


def test_unknown_baseline_is_refused(small_calibration):
    with pytest.raises(ValueError, match="nobody"):
        build_report(gold_set_version=small_calibration, baseline="nobody")


def report_queries(items: int, name: str) -> int:
    """Build a report on a new gold set of `items` items (3 judges) and return how many statements it took."""
    version = make_gold_set(name, labels(items * 3 // 10, items - items * 3 // 10))
    run = make_run(version)
    for judge in ("one", "two", "three"):
        add_verdicts(run, make_judge_version(f"{name}-{judge}"), ["reject", "accept"] * (items // 2))
    record_verdict_sums([run.pk])  # as the run's completion does
    with CaptureQueriesContext(connection) as statements:
        report = build_report(gold_set_version=version)
    assert len(report["judges"]) == 3
    return len(statements)


def test_loading_takes_the_same_number_of_queries_however_many_items():
    taxonomy_default()  # seeded by a migration; a transactional test's flush earlier in this process removes it
    # Runs (with their labels), gold items (grouped), the runs' recorded sums, verdict rows, judge
    # versions (with whether they show worked examples: none here, so none are read); the taxonomy
    # (its classes and other names: 3 for a version published before taxonomies) and the class
    # guesses: 9 on SQLite. On PostgreSQL the verdict rows are streamed through a server-side
    # cursor, which Django's log does not see, inside a transaction (here a savepoint) that
    # adds its SET LOCAL: 11 there.
    small, large = report_queries(100, "small"), report_queries(400, "large")
    assert small == large <= (11 if connection.vendor == "postgresql" else 9)


def test_ensembles_without_latency_are_the_same_points_less_the_latency_keys(small_calibration):
    """The dashboard page asks for its points without latency (it shows none): every other figure is the same."""
    data = load_calibration(gold_set_version=small_calibration)
    with_latency = ensembles_up_to(data, generation_cost_usd=0.01)
    without = ensembles_up_to(data, generation_cost_usd=0.01, latency=False)
    latency_keys = {f"latency_ms_{way}_{p}" for way in ("parallel", "sequential") for p in ("p50", "p95")}
    assert all(latency_keys <= set(point) for point in with_latency)
    assert [{k: v for k, v in point.items() if k not in latency_keys} for point in with_latency] == without


def test_ensembles_up_to_three_mark_a_pareto_frontier(small_calibration):
    data = load_calibration(gold_set_version=small_calibration)
    points = ensembles_up_to(data, generation_cost_usd=0.01)
    assert {tuple(p["members"]) for p in points} == {("alpha v1",), ("beta v1",), ("alpha v1", "beta v1")}
    assert any(p["pareto"] for p in points)
