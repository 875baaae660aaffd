"""Every metric definition checked against small tables computed by hand."""

import itertools
import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import KFold, StratifiedGroupKFold, cross_val_predict

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


def test_pair_kappa_is_kappa_of_one_draw_of_each_judge(counts):
    probs = metrics.reject_prob(counts)
    pair = metrics.pair_overlap(probs[:, 0], probs[:, 1], IS_WRONG)
    # Items 1..3: judge 0 rejects with p = (0, 1/2, 0), judge 1 with (1, 0, 2/3). The
    # expected table of one draw of each, weighted by the draw probabilities:
    pa, pb = np.array([0, 0.5, 0]), np.array([1, 0, 2 / 3])
    table = np.array([[np.sum((1 - pa) * (1 - pb)), np.sum((1 - pa) * pb)], [np.sum(pa * (1 - pb)), np.sum(pa * pb)]])
    n = table.sum()
    observed = np.trace(table) / n
    expected = (table.sum(axis=1) @ table.sum(axis=0)) / n**2
    assert pair["kappa"] == pytest.approx((observed - expected) / (1 - expected))


def test_kappa_with_one_verdict_per_item_is_the_textbook_kappa_and_matches_labelling():
    from labelling.agreement import cohen_kappa as labelling_kappa

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
        threshold = metrics.threshold_for("majority", n)
        assert all(bool(metrics.majority_rejects(r, n)) == (r >= threshold) for r in range(n + 1))


def test_k_out_of_range_is_refused_with_a_message_never_clamped():
    with pytest.raises(ValueError, match="between 1 and 3"):
        metrics.threshold_for("k_of_n", 3, 4)
    with pytest.raises(ValueError, match="between 1 and 3"):
        metrics.threshold_for("k_of_n", 3, 0)
    assert "k=2" in metrics.ensemble_description(["a v1", "b v1", "c v1"], "k_of_n", 2)
    assert "k=2" in metrics.ensemble_description(["a v1", "b v1", "c v1"], "majority")
    assert "k=1" in metrics.ensemble_description(["a v1", "b v1"], "any")


def enumerate_ensemble(decisions, members, threshold):
    """Brute force: per item, combine the r-th answered verdict of every member, average."""
    probs = []
    for item in decisions:
        answered = [[d for d in item[m] if d in (A, R)] for m in members]
        aligned = min(len(a) for a in answered)
        if aligned == 0:
            probs.append(np.nan)
            continue
        rejects = [sum(a[r] == R for a in answered) >= threshold for r in range(aligned)]
        probs.append(sum(rejects) / aligned)
    return np.array(probs)


def test_k_of_n_ensembles_on_single_draws_match_enumeration():
    rng = np.random.default_rng(21)
    decisions = rng.choice([A, R, E, M], p=[0.45, 0.4, 0.1, 0.05], size=(30, 3, 4))
    is_wrong = rng.random(30) < 0.4
    draws = metrics.draws_from_decisions(decisions)
    everywhere = np.ones(30, dtype=bool)
    for members in ([0, 1], [0, 1, 2], [2]):
        for rule, k in (("any", None), ("majority", None), ("k_of_n", len(members))):
            result = metrics.ensemble_metrics(
                draws, is_wrong, members, rule, items=everywhere, cost_per_verdict=np.zeros(3), k=k
            )
            threshold = metrics.threshold_for(rule if len(members) > 1 else "any", len(members), k)
            expected = metrics.rates(enumerate_ensemble(decisions, members, threshold), is_wrong)
            assert result["catch_rate"] == pytest.approx(expected["catch_rate"])
            assert result["false_reject_rate"] == pytest.approx(expected["false_reject_rate"])
            assert result["judged_wrong"] == expected["judged_wrong"]


def known_members():
    """3 members × 5 repeats with fixed per-draw behaviour on 4 wrong and 4 correct items.

    On wrong items A rejects draws 0-2, B draws 2-4, C draws 0 and 4; on correct items
    A rejects draw 0 only, the others never.
    """
    decisions = np.full((8, 3, 5), A)
    for item in range(4):
        decisions[item, 0, [0, 1, 2]] = R
        decisions[item, 1, [2, 3, 4]] = R
        decisions[item, 2, [0, 4]] = R
    decisions[4:, 0, 0] = R
    return decisions, np.array([True] * 4 + [False] * 4)


def test_deployed_figures_of_known_members_follow_their_draws():
    decisions, is_wrong = known_members()
    draws = metrics.draws_from_decisions(decisions)
    everywhere = np.ones(8, dtype=bool)

    def score(rule, k=None):
        return metrics.ensemble_metrics(
            draws, is_wrong, [0, 1, 2], rule, items=everywhere, cost_per_verdict=np.zeros(3), k=k
        )

    # Draw by draw, rejecting members on wrong items: {A,C}, {A}, {A,B}, {B}, {B,C}.
    assert score("any")["catch_rate"] == 1.0
    assert score("majority")["catch_rate"] == pytest.approx(3 / 5)
    assert score("k_of_n", 3)["catch_rate"] == 0.0
    # Correct items: only A's draw 0 rejects.
    assert score("any")["false_reject_rate"] == pytest.approx(1 / 5)
    assert score("majority")["false_reject_rate"] == 0.0
    # Treating members as independent given the item (p = 0.6, 0.6, 0.4) would have said
    # P(at least 2 reject) = 0.36 + 0.096 + 0.096 = 0.552, not what a deployed majority does.
    assert score("majority")["catch_rate"] != pytest.approx(0.552)


def test_stacked_single_draw_model_is_no_better_than_the_best_rule_on_single_draws():
    """Members right 65% of the time per draw: averaging 5 draws flatters, single draws do not."""
    rng = np.random.default_rng(4)
    n_items, n_members, repeats = 300, 3, 5
    is_wrong = rng.random(n_items) < 0.4
    p = np.where(is_wrong, 0.65, 0.35)[:, None, None]
    decisions = np.where(rng.random((n_items, n_members, repeats)) < p, R, A)
    draws = metrics.draws_from_decisions(decisions)
    everywhere = np.ones(n_items, dtype=bool)
    stacked = metrics.ensemble_metrics(
        draws, is_wrong, [0, 1, 2], "stacked", items=everywhere, cost_per_verdict=np.array([0.01, 0.02, 0.03])
    )
    # Enumerate every Boolean rule over the 8 single-draw patterns; none can be beaten.
    patterns = list(itertools.product([0, 1], repeat=n_members))
    observed = (decisions == R).astype(int)  # items × members × repeats
    share = np.zeros((n_items, len(patterns)))
    for index, pattern in enumerate(patterns):
        share[:, index] = (observed == np.array(pattern)[None, :, None]).all(axis=1).mean(axis=1)
    best = -1.0
    for rule in itertools.product([0, 1], repeat=len(patterns)):
        item_prob = share @ np.array(rule)
        best = max(best, item_prob[is_wrong].mean() - item_prob[~is_wrong].mean())
    youden = stacked["catch_rate"] - stacked["false_reject_rate"]
    assert youden <= best + 0.02
    # Averaged inputs, in sample, would claim far more than any single-draw rule can do.
    averaged = observed.mean(axis=2)
    in_sample = LogisticRegression(class_weight="balanced").fit(averaged, is_wrong).predict(averaged)
    assert in_sample[is_wrong].mean() - in_sample[~is_wrong].mean() > best + 0.1
    # One verdict of each member per attempt.
    assert stacked["cost_per_attempt_usd"] == pytest.approx(0.06)
    assert stacked["draws"] == n_items * repeats


def test_ensemble_cost_and_latency_count_the_draws_used():
    decisions = np.array([[[R, A], [A, E]], [[A, A], [A, A]], [[A, R], [R, A]], [[A, A], [A, A]]])
    latency = np.array(
        [
            [[100.0, 900.0], [300.0, 5000.0]],
            [[200.0, 200.0], [100.0, 100.0]],
            [[100.0, 100.0], [100.0, 100.0]],
            [[100.0, 100.0], [100.0, 100.0]],
        ]
    )
    is_wrong = np.array([True, True, False, False])
    draws = metrics.draws_from_decisions(decisions, latency)
    result = metrics.ensemble_metrics(
        draws,
        is_wrong,
        [0, 1],
        "any",
        items=np.ones(4, dtype=bool),
        cost_per_verdict=np.array([0.01, 0.03]),
        generation_cost=0.01,
    )
    # Item 0: judge 1's second verdict is an error, so only draw 0 is aligned (and it rejects).
    assert result["catch_rate"] == pytest.approx((1 + 0) / 2)
    assert result["false_reject_rate"] == pytest.approx((1 + 0) / 2)
    assert result["draws"] == 7
    assert result["cost_per_accepted_usd"] == pytest.approx(0.05 / (1 - result["flag_rate"]))
    parallel = [300, 200, 200, 100, 100, 100, 100]
    sequential = [400, 300, 300, 200, 200, 200, 200]
    assert result["latency_ms_parallel_p50"] == pytest.approx(np.percentile(parallel, 50))
    assert result["latency_ms_sequential_p95"] == pytest.approx(np.percentile(sequential, 95))


def opposite_folds():
    """Two folds whose feature→label relation is reversed: fitted on one, wrong on the other."""
    features = np.array([1.0] * 5 + [0.0] * 5 + [1.0] * 5 + [0.0] * 5).reshape(-1, 1)
    is_wrong = np.array([True] * 5 + [False] * 5 + [False] * 5 + [True] * 5)
    return features, is_wrong


@pytest.mark.filterwarnings("ignore:The groups parameter is ignored")
def test_stacked_ensemble_is_scored_out_of_fold_never_in_sample():
    """Each fold predicted by a model fitted on the other fails; the stacked rule must say so."""
    features, is_wrong = opposite_folds()
    cv = KFold(n_splits=2, shuffle=False)
    stacked = metrics.stacked_decisions(features, is_wrong, np.arange(20), cv=cv)
    out_of_fold = metrics.rates(stacked, is_wrong)
    assert out_of_fold["catch_rate"] == 0.0
    assert out_of_fold["false_reject_rate"] == 1.0


@pytest.mark.filterwarnings("ignore:The groups parameter is ignored")
def test_an_items_own_label_never_changes_its_stacked_prediction():
    rng = np.random.default_rng(11)
    features = (rng.random((40, 2)) < 0.5).astype(float)
    is_wrong = (features[:, 0] + 0.6 * rng.random(40)) > 0.8
    cv = KFold(n_splits=4, shuffle=True, random_state=1)
    before = metrics.stacked_decisions(features, is_wrong, np.arange(40), cv=cv)
    for item in (0, 7, 21):
        flipped = is_wrong.copy()
        flipped[item] = not flipped[item]
        after = metrics.stacked_decisions(features, flipped, np.arange(40), cv=cv)
        assert after[item] == before[item]


def test_stacked_default_folds_keep_an_items_draws_together():
    rng = np.random.default_rng(5)
    items = np.repeat(np.arange(30), 3)
    item_wrong = rng.random(30) < 0.4
    features = (rng.random((90, 2)) < np.where(item_wrong[items], 0.7, 0.3)[:, None]).astype(float)
    expected_proba = cross_val_predict(
        LogisticRegression(class_weight="balanced"),
        features,
        item_wrong[items].astype(int),
        groups=items,
        cv=StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=0),
        method="predict_proba",
    )[:, 1]
    got = metrics.stacked_decisions(features, item_wrong[items], items)
    np.testing.assert_array_equal(got, expected_proba >= 0.5)


def test_stacked_ensemble_needs_two_items_of_each_class():
    result = metrics.stacked_decisions(np.array([[0.0], [1.0], [0.0]]), np.array([True, False, False]), np.arange(3))
    assert np.isnan(result).all()


def test_miss_lists_sum_to_the_pair_and_pattern_figures():
    rng = np.random.default_rng(2)
    probs = rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0, np.nan], size=(40, 3))
    is_wrong = rng.random(40) < 0.5
    pair = metrics.pair_overlap(probs[:, 0], probs[:, 2], is_wrong)
    rows, probability = metrics.missed_by_all(probs, is_wrong, [0, 2])
    assert probability.sum() == pytest.approx(pair["both_missed"])
    assert list(probability) == sorted(probability, reverse=True) and (probability > 0).all()
    patterns = metrics.miss_patterns(probs, is_wrong)
    common = is_wrong & ~np.isnan(probs).any(axis=1)
    assert sum(patterns.values()) == pytest.approx(common.sum())
    missed_any = sum(size for pattern, size in patterns.items() if any(pattern))
    assert missed_any == pytest.approx(np.sum(1 - np.prod(probs[common], axis=1)))
    for pattern, size in patterns.items():
        _, listed = metrics.missed_exactly(probs, is_wrong, np.array(pattern))
        assert listed.sum() == pytest.approx(size)


def test_pareto_frontier_keeps_only_undominated_points():
    assert metrics.pareto_frontier([1, 2, 3, 2], [0.5, 0.7, 0.6, 0.4]) == [True, True, False, False]
