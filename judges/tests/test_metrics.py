"""Every metric definition checked against small tables computed by hand."""

import itertools
import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

from judges import metrics
from judges.metrics import ACCEPT as A
from judges.metrics import ERROR as E
from judges.metrics import MISSING as M
from judges.metrics import REJECT as R

# 4 items (0, 1 wrong; 2, 3 correct) × 2 judges × 3 repeats, with errors and a missing draw.
DECISIONS = np.array(
    [
        [[R, R, A], [E, E, E]],  # item 0, wrong: judge 0 rejects 2/3; judge 1 only errors (unjudged)
        [[A, A, A], [R, E, M]],  # item 1, wrong: judge 0 never; judge 1 one reject, one error
        [[R, E, A], [A, A, A]],  # item 2, correct: judge 0 1/2; judge 1 0
        [[A, A, A], [R, A, R]],  # item 3, correct: judge 0 0; judge 1 2/3
    ]
)
IS_WRONG = np.array([True, True, False, False])
ERROR_CLASS = np.array(["join_fanout", "missing_filter", "", ""])


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


def test_pair_overlap_uses_items_judged_by_both(counts):
    probs = metrics.reject_prob(counts)
    pair = metrics.pair_overlap(probs[:, 0], probs[:, 1], IS_WRONG)
    # Only item 1 is wrong and judged by both: judge 0 misses it, judge 1 catches it.
    assert pair["items"] == 3
    assert pair["missed_a"] == 1 and pair["missed_b"] == 0
    assert pair["both_missed"] == 0
    assert pair["miss_jaccard"] == 0
    assert pair["union_catch_rate"] == 1
    assert pair["union_false_reject_rate"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_pair_overlap_with_repeats_multiplies_miss_probabilities():
    probs_a = np.array([0.5, 1.0, 0.0, 0.25])
    probs_b = np.array([0.5, 0.0, 0.0, 0.0])
    is_wrong = np.array([True, True, True, False])
    pair = metrics.pair_overlap(probs_a, probs_b, is_wrong)
    assert pair["both_missed"] == pytest.approx(0.25 + 0 + 1)
    assert pair["missed_a"] == pytest.approx(1.5)
    assert pair["missed_b"] == pytest.approx(2.5)
    assert pair["miss_jaccard"] == pytest.approx(1.25 / (1.5 + 2.5 - 1.25))
    assert pair["union_catch_rate"] == pytest.approx((0.75 + 1 + 0) / 3)
    assert pair["union_false_reject_rate"] == pytest.approx(0.25)


def test_kappa_of_majority_decisions_matches_scikit_learn():
    rng = np.random.default_rng(7)
    for _ in range(20):
        a = rng.integers(0, 2, 50)
        b = np.where(rng.random(50) < 0.7, a, 1 - a)
        assert metrics.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


def test_pair_kappa_is_computed_on_majority_decisions(counts):
    probs = metrics.reject_prob(counts)
    pair = metrics.pair_overlap(probs[:, 0], probs[:, 1], IS_WRONG)
    # Items 1..3 — majorities: judge 0 (0, 1 [a tie rejects], 0), judge 1 (1, 0, 1).
    assert pair["kappa"] == pytest.approx(cohen_kappa_score([0, 1, 0], [1, 0, 1]))


def brute_force_at_least(probs, k):
    total = 0.0
    for outcome in itertools.product([0, 1], repeat=len(probs)):
        if sum(outcome) >= k:
            total += math.prod(p if o else 1 - p for p, o in zip(probs, outcome, strict=True))
    return total


def test_poisson_binomial_matches_enumeration_of_outcomes():
    rng = np.random.default_rng(3)
    probs = rng.random((6, 4))
    for k in range(5):
        got = metrics.poisson_binomial_at_least(probs, k)
        expected = [brute_force_at_least(row, k) for row in probs]
        np.testing.assert_allclose(got, expected)


def test_any_majority_and_k_of_n_rules():
    probs = np.array([[0.5, 0.5, 0.5]])
    assert metrics.ensemble_reject_prob(probs, "any")[0] == pytest.approx(0.875)
    assert metrics.ensemble_reject_prob(probs, "majority")[0] == pytest.approx(0.5)
    assert metrics.ensemble_reject_prob(probs, "k_of_n", k=3)[0] == pytest.approx(0.125)
    with pytest.raises(ValueError, match="k_of_n"):
        metrics.ensemble_reject_prob(probs, "k_of_n", k=4)


def test_ensemble_cost_and_latency_add_up_members():
    probs = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    is_wrong = np.array([True, True, False, False])
    latency = np.array([[100.0, 300.0], [200.0, 100.0], [100.0, 100.0], [100.0, 100.0]])
    result = metrics.ensemble_metrics(
        probs,
        is_wrong,
        [0, 1],
        "any",
        cost_per_verdict=np.array([0.01, 0.03]),
        item_latency=latency,
        generation_cost=0.01,
    )
    assert result["catch_rate"] == 0.5 and result["false_reject_rate"] == 0.5 and result["flag_rate"] == 0.5
    assert result["cost_per_accepted_usd"] == pytest.approx(2 * 0.05)
    assert result["latency_ms_parallel_p50"] == pytest.approx(np.percentile([300, 200, 100, 100], 50))
    assert result["latency_ms_sequential_p95"] == pytest.approx(np.percentile([400, 300, 200, 200], 95))


def opposite_folds():
    """Two folds whose feature→label relation is reversed: fitted on one, wrong on the other."""
    features = np.array([0.9] * 5 + [0.1] * 5 + [0.8] * 5 + [0.2] * 5).reshape(-1, 1)
    is_wrong = np.array([True] * 5 + [False] * 5 + [False] * 5 + [True] * 5)
    return features, is_wrong


def test_stacked_ensemble_is_scored_out_of_fold_never_in_sample():
    """In-sample a logistic fit on all items does fine; each fold predicted by the other fails.

    This construction separates the two: the stacked rule must report the out-of-fold figure.
    """
    features, is_wrong = opposite_folds()
    cv = KFold(n_splits=2, shuffle=False)
    stacked = metrics.stacked_reject_prob(features, is_wrong, cv=cv)
    out_of_fold = metrics.rates(stacked, is_wrong)
    assert out_of_fold["catch_rate"] == 0.0
    assert out_of_fold["false_reject_rate"] == 1.0
    in_sample = LogisticRegression(class_weight="balanced").fit(features, is_wrong).predict(features)
    assert metrics.rates(in_sample.astype(float), is_wrong)["catch_rate"] > 0.4


def test_an_items_own_label_never_changes_its_stacked_prediction():
    rng = np.random.default_rng(11)
    features = rng.random((40, 2))
    is_wrong = (features[:, 0] + 0.3 * rng.random(40)) > 0.8
    cv = KFold(n_splits=4, shuffle=True, random_state=1)
    before = metrics.stacked_reject_prob(features, is_wrong, cv=cv)
    for item in (0, 7, 21):
        flipped = is_wrong.copy()
        flipped[item] = not flipped[item]
        after = metrics.stacked_reject_prob(features, flipped, cv=cv)
        assert after[item] == before[item]


def test_stacked_default_folds_are_stratified_cross_val_predict():
    rng = np.random.default_rng(5)
    features = rng.random((30, 3))
    is_wrong = features[:, 1] > 0.6
    expected_proba = cross_val_predict(
        LogisticRegression(class_weight="balanced"),
        features,
        is_wrong.astype(int),
        cv=StratifiedKFold(n_splits=5, shuffle=True, random_state=0),
        method="predict_proba",
    )[:, 1]
    np.testing.assert_array_equal(metrics.stacked_reject_prob(features, is_wrong), expected_proba >= 0.5)


def test_stacked_ensemble_needs_two_items_of_each_class():
    result = metrics.stacked_reject_prob(np.array([[0.1], [0.9], [0.2]]), np.array([True, False, False]))
    assert np.isnan(result).all()


def test_pareto_frontier_keeps_only_undominated_points():
    assert metrics.pareto_frontier([1, 2, 3, 2], [0.5, 0.7, 0.6, 0.4]) == [True, True, False, False]
