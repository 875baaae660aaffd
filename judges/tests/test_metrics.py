"""Every metric definition checked against small tables computed by hand."""

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judges import ensembles, metrics
from judges.metrics import ACCEPT as A
from judges.metrics import MISSING as M
from judges.metrics import REJECT as R
from judges.tests.hand_tables import DECISIONS, ERROR_CLASS, IS_WRONG
from labelling.agreement import cohen_kappa as labelling_kappa


@pytest.fixture
def counts():
    return metrics.counts_from_decisions(DECISIONS)


def test_reject_prob_is_share_of_non_error_verdicts_and_nan_when_unjudged(counts):
    probs = metrics.reject_prob(counts)
    np.testing.assert_allclose(probs[:, 0], [2 / 3, 0, 1 / 2, 0])
    assert math.isnan(probs[0, 1])
    np.testing.assert_allclose(probs[1:, 1], [1, 0, 2 / 3])


def test_flat_rows_and_the_repeat_array_give_the_same_counts(counts):
    items, judges, repeats = np.nonzero(DECISIONS != M)
    codes = DECISIONS[items, judges, repeats]
    from_rows = metrics.counts_from_rows(items, judges, codes, n_items=4, n_judges=2)
    for name in ("rejects", "accepts", "errors"):
        np.testing.assert_array_equal(getattr(from_rows, name), getattr(counts, name))


def test_rates_are_means_of_reject_prob_over_judged_items(counts):
    probs = metrics.reject_prob(counts)
    first = metrics.rates(probs[:, 0], IS_WRONG)
    assert first["catch_rate"] == pytest.approx(1 / 3)
    assert first["false_reject_rate"] == pytest.approx(1 / 4)
    assert first["flag_rate"] == pytest.approx(7 / 24)
    second = metrics.rates(probs[:, 1], IS_WRONG)
    # Item 0 is unjudged for judge 1: its rates stand on the three items it did judge.
    assert second["judged_wrong"] == 1
    assert second["catch_rate"] == pytest.approx(1.0)
    assert second["false_reject_rate"] == pytest.approx(1 / 3)
    assert second["flag_rate"] == pytest.approx(5 / 9)


def test_with_one_verdict_per_item_rates_are_plain_counts_over_totals():
    decisions = np.array([[[R]], [[A]], [[R]], [[R]], [[A]]])
    is_wrong = np.array([True, True, True, False, False])
    probs = metrics.reject_prob(metrics.counts_from_decisions(decisions))[:, 0]
    result = metrics.rates(probs, is_wrong)
    assert result["catch_rate"] == 2 / 3
    assert result["false_reject_rate"] == 1 / 2
    assert result["flag_rate"] == 3 / 5


def test_flip_rate_counts_only_items_with_two_non_error_verdicts(counts):
    first = metrics.stability(counts.rejects[:, 0], counts.accepts[:, 0])
    assert first == {"flip_rate": 0.5, "items_with_repeats": 4, "stable_reject": 0, "stable_accept": 2, "flaky": 2}
    second = metrics.stability(counts.rejects[:, 1], counts.accepts[:, 1])
    # Item 1 has a single non-error verdict: classed stable-reject, not in the flip denominator.
    assert second == {"flip_rate": 0.5, "items_with_repeats": 2, "stable_reject": 1, "stable_accept": 1, "flaky": 1}


def wilson_by_quadratic(successes, n, z=1.959964):
    """Solve (p̂ − p)² = z² p (1 − p) / n for p: an independent route to Wilson's bounds."""
    phat = successes / n
    a = 1 + z * z / n
    b = -(2 * phat + z * z / n)
    c = phat * phat
    roots = sorted(np.roots([a, b, c]).real)
    return roots[0], roots[1]


@pytest.mark.parametrize(("successes", "n"), [(23, 40), (19, 160), (42, 200), (0, 12), (12, 12), (1, 3), (7, 9)])
def test_wilson_interval_matches_the_quadratic_definition(successes, n):
    low, high = metrics.wilson_interval(successes / n, n)
    expected_low, expected_high = wilson_by_quadratic(successes, n)
    assert low == pytest.approx(max(expected_low, 0.0), abs=1e-9)
    assert high == pytest.approx(min(expected_high, 1.0), abs=1e-9)


def test_wilson_interval_of_23_of_40_matches_a_hand_computation():
    # By hand: z²/n = 0.096040, centre = (0.575 + 0.048020) / 1.096040 = 0.568429,
    # half = 1.959964 / 1.096040 × sqrt(0.575 × 0.425 / 40 + z² / 6400) = 0.146477.
    low, high = metrics.wilson_interval(23 / 40, 40)
    assert (round(low, 4), round(high, 4)) == (0.4220, 0.7149)


def test_wilson_interval_is_none_without_items():
    assert metrics.wilson_interval(None, 0) is None


def test_catch_rate_by_error_class_covers_each_class_present(counts):
    probs = metrics.reject_prob(counts)[:, 0]
    by_class = metrics.catch_rates_by_error_class(probs, IS_WRONG, ERROR_CLASS)
    assert set(by_class) == {"join_fanout", "missing_filter"}
    assert by_class["join_fanout"]["rate"] == pytest.approx(2 / 3)
    assert by_class["missing_filter"]["rate"] == 0
    assert by_class["join_fanout"]["ci95"] == pytest.approx(metrics.wilson_interval(2 / 3, 1))


def test_cost_per_accepted_is_attempts_times_generation_plus_review():
    assert metrics.attempts_per_accepted(0.2) == pytest.approx(1.25)
    assert metrics.cost_per_accepted(0.2, review_cost=0.08, generation_cost=0.02) == pytest.approx(0.125)
    assert metrics.attempts_per_accepted(1.0) is None


def test_cost_per_accepted_interval_prices_the_ends_of_the_flag_rates_interval():
    low, high = metrics.cost_per_accepted_interval((0.2, 0.5), 0.08, 0.02)
    assert (low, high) == (pytest.approx(0.125), pytest.approx(0.2))
    assert metrics.cost_per_accepted_interval(None, 0.08) is None
    assert metrics.cost_per_accepted_interval((0.5, 1.0), 0.08) is None


def test_break_even_divides_extra_cost_by_extra_catches_per_output():
    # (0.11 − 0.01) / (0.2 × (0.6 − 0.1)) = 1.0
    assert metrics.break_even_error_cost(0.11, 0.6, 0.01, 0.1, 0.2) == pytest.approx(1.0)
    assert metrics.break_even_error_cost(0.11, 0.1, 0.01, 0.1, 0.2) is None
    assert metrics.break_even_error_cost(0.11, 0.05, 0.01, 0.1, 0.2) is None


def test_latency_uses_numpys_linear_percentile():
    values = np.array([100, 200, 300, 400, 1000.0])
    assert metrics.latency_percentiles(values) == (300.0, pytest.approx(880.0))
    assert metrics.latency_percentiles(np.array([])) == (None, None)


def test_judge_summary_counts_errors_unjudged_and_missing_items(counts):
    summary = metrics.judge_summary(
        counts, 1, IS_WRONG, ERROR_CLASS, cost_sum=0.9, verdicts=9, latencies=np.arange(9.0), generation_cost=0.0
    )
    assert summary["errors"] == 4
    assert summary["unjudged"] == 1
    assert summary["missing"] == 0
    assert summary["cost_per_verdict_usd"] == pytest.approx(0.1)
    assert summary["attempts_per_accepted"] == pytest.approx(1 / (1 - 5 / 9))
    # join_fanout is present in the gold set but its only item is unjudged: no rate.
    assert summary["catch_rate_by_error_class"] == {"join_fanout": None, "missing_filter": 1.0}


def test_kappa_of_majority_decisions_matches_scikit_learn():
    rng = np.random.default_rng(7)
    for _ in range(20):
        a = rng.integers(0, 2, 50)
        b = np.where(rng.random(50) < 0.7, a, 1 - a)
        assert metrics.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


def test_kappa_with_one_verdict_per_item_is_the_textbook_kappa_and_matches_labelling():
    rng = np.random.default_rng(8)
    a = rng.integers(0, 2, 60)
    b = np.where(rng.random(60) < 0.6, a, 1 - a)
    assert metrics.cohen_kappa(a, b) == pytest.approx(labelling_kappa(list(a), list(b)))


def test_kappa_vs_gold_averages_over_draws_on_judged_items_only():
    probs = np.array([1.0, 0.5, np.nan, 0.0, 0.0])
    is_wrong = np.array([True, True, True, False, False])
    # Expanding each judged item into its two equally likely draws gives the same kappa.
    draws = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    gold = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    assert metrics.kappa_vs_gold(probs, is_wrong) == pytest.approx(cohen_kappa_score(draws, gold))


def test_the_tie_rule_is_a_strict_majority_of_answered_votes():
    assert not metrics.majority_rejects(1, 2)
    assert metrics.majority_rejects(2, 3)
    assert not metrics.majority_rejects(0, 0)
    np.testing.assert_array_equal(metrics.majority_decisions(np.array([0.5, 0.51, np.nan, 0.0])), [0, 1, 0, 0])
    for n in range(1, 8):
        threshold = ensembles.threshold_for("majority", n)
        assert all(bool(metrics.majority_rejects(r, n)) == (r >= threshold) for r in range(n + 1))
