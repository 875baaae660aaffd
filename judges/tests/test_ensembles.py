"""Pair overlap, miss patterns, ensembles on single draws and the Pareto frontier, checked by hand."""

import itertools

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedGroupKFold, cross_val_predict

from judges import ensembles, metrics
from judges.metrics import ACCEPT as A
from judges.metrics import ERROR as E
from judges.metrics import MISSING as M
from judges.metrics import REJECT as R
from judges.tests.hand_tables import DECISIONS, IS_WRONG


def test_pair_overlap_uses_items_judged_by_both():
    pair = ensembles.pair_overlap(ensembles.draws_from_decisions(DECISIONS), IS_WRONG, 0, 1)
    # Only item 1 is wrong and judged by both: judge 0 misses it, judge 1 catches it.
    assert pair["items"] == 3
    assert pair["missed_a"] == 1 and pair["missed_b"] == 0
    assert pair["both_missed"] == 0
    assert pair["miss_jaccard"] == 0
    assert pair["union_catch_rate"] == 1
    # Item 2: draws (R, A) of judge 0 against (A, A) of judge 1 — the union rejects 1 of 2
    # aligned draws; item 3: (A, A, A) against (R, A, R) — 2 of 3.
    assert pair["union_false_reject_rate"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_pair_union_and_misses_are_on_aligned_draws_not_as_if_independent():
    # One wrong item, two draws each: A rejects draw 0, B draw 1. Deployed, either rejects
    # on every draw; independence (1 - (1 - 0.5)(1 - 0.5)) would have said 0.75.
    draws = ensembles.draws_from_decisions(np.array([[[R, A], [A, R]], [[A, A], [A, A]]]))
    pair = ensembles.pair_overlap(draws, np.array([True, False]), 0, 1)
    assert pair["union_catch_rate"] == 1.0
    assert (pair["missed_a"], pair["missed_b"], pair["both_missed"]) == (0.5, 0.5, 0.0)
    assert pair["miss_jaccard"] == 0.0
    # The same rejects on the same draw: the union adds nothing and they miss together.
    same = ensembles.draws_from_decisions(np.array([[[R, A], [R, A]], [[A, A], [A, A]]]))
    pair = ensembles.pair_overlap(same, np.array([True, False]), 0, 1)
    assert (pair["union_catch_rate"], pair["both_missed"], pair["miss_jaccard"]) == (0.5, 0.5, 1.0)


def test_the_pair_union_is_the_two_member_any_ensemble_and_both_missed_its_complement():
    rng = np.random.default_rng(5)
    decisions = rng.choice([A, R, E, M], p=[0.45, 0.35, 0.1, 0.1], size=(40, 2, 3))
    is_wrong = rng.random(40) < 0.5
    draws = ensembles.draws_from_decisions(decisions)
    pair = ensembles.pair_overlap(draws, is_wrong, 0, 1)
    union = ensembles.ensemble_metrics(draws, is_wrong, [0, 1], "any")
    assert pair["union_catch_rate"] == union["catch_rate"]
    assert pair["union_false_reject_rate"] == union["false_reject_rate"]
    assert pair["both_missed"] == pytest.approx(union["judged_wrong"] * (1 - union["catch_rate"]))
    assert pair["missed_a"] >= pair["both_missed"] <= pair["missed_b"]


def test_pair_kappa_is_kappa_of_their_aligned_draws():
    pair = ensembles.pair_overlap(ensembles.draws_from_decisions(DECISIONS), IS_WRONG, 0, 1)
    # Items 1..3, share of aligned draws per cell (a accepts/rejects × b accepts/rejects):
    # item 1 (A against R): a-accept b-reject; item 2 (R, A against A, A): half each of
    # a-reject b-accept and both accept; item 3 (A, A, A against R, A, R): 1/3 both accept,
    # 2/3 a-accept b-reject.
    table = np.array([[0 + 1 / 2 + 1 / 3, 1 + 0 + 2 / 3], [0 + 1 / 2 + 0, 0.0]])
    n = table.sum()
    observed = np.trace(table) / n
    expected = (table.sum(axis=1) @ table.sum(axis=0)) / n**2
    assert pair["kappa"] == pytest.approx((observed - expected) / (1 - expected))


def test_k_out_of_range_is_refused_with_a_message_never_clamped():
    with pytest.raises(ValueError, match="between 1 and 3"):
        ensembles.threshold_for("k_of_n", 3, 4)
    with pytest.raises(ValueError, match="between 1 and 3"):
        ensembles.threshold_for("k_of_n", 3, 0)
    assert "k=2" in ensembles.ensemble_description(["a v1", "b v1", "c v1"], "k_of_n", 2)
    assert "k=2" in ensembles.ensemble_description(["a v1", "b v1", "c v1"], "majority")
    assert "k=1" in ensembles.ensemble_description(["a v1", "b v1"], "any")


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
    draws = ensembles.draws_from_decisions(decisions)
    everywhere = np.ones(30, dtype=bool)
    for members in ([0, 1], [0, 1, 2], [2]):
        for rule, k in (("any", None), ("majority", None), ("k_of_n", len(members))):
            result = ensembles.ensemble_metrics(
                draws, is_wrong, members, rule, items=everywhere, cost_per_verdict=np.zeros(3), k=k
            )
            threshold = ensembles.threshold_for(rule if len(members) > 1 else "any", len(members), k)
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
    draws = ensembles.draws_from_decisions(decisions)
    everywhere = np.ones(8, dtype=bool)

    def score(rule, k=None):
        return ensembles.ensemble_metrics(
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
    draws = ensembles.draws_from_decisions(decisions)
    everywhere = np.ones(n_items, dtype=bool)
    stacked = ensembles.ensemble_metrics(
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
    draws = ensembles.draws_from_decisions(decisions, latency)
    result = ensembles.ensemble_metrics(
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
    stacked = ensembles.stacked_decisions(features, is_wrong, np.arange(20), cv=cv)
    out_of_fold = metrics.rates(stacked, is_wrong)
    assert out_of_fold["catch_rate"] == 0.0
    assert out_of_fold["false_reject_rate"] == 1.0


@pytest.mark.filterwarnings("ignore:The groups parameter is ignored")
def test_an_items_own_label_never_changes_its_stacked_prediction():
    rng = np.random.default_rng(11)
    features = (rng.random((40, 2)) < 0.5).astype(float)
    is_wrong = (features[:, 0] + 0.6 * rng.random(40)) > 0.8
    cv = KFold(n_splits=4, shuffle=True, random_state=1)
    before = ensembles.stacked_decisions(features, is_wrong, np.arange(40), cv=cv)
    for item in (0, 7, 21):
        flipped = is_wrong.copy()
        flipped[item] = not flipped[item]
        after = ensembles.stacked_decisions(features, flipped, np.arange(40), cv=cv)
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
    got = ensembles.stacked_decisions(features, item_wrong[items], items)
    np.testing.assert_array_equal(got, expected_proba >= 0.5)


def test_stacked_ensemble_needs_two_items_of_each_class():
    result = ensembles.stacked_decisions(np.array([[0.0], [1.0], [0.0]]), np.array([True, False, False]), np.arange(3))
    assert np.isnan(result).all()


def test_miss_lists_sum_to_the_pair_and_pattern_figures():
    rng = np.random.default_rng(2)
    decisions = rng.choice([A, R, E, M], p=[0.45, 0.35, 0.1, 0.1], size=(40, 3, 3))
    is_wrong = rng.random(40) < 0.5
    draws = ensembles.draws_from_decisions(decisions)
    pair = ensembles.pair_overlap(draws, is_wrong, 0, 2)
    rows, probability = ensembles.missed_by_all(draws, is_wrong, [0, 2])
    assert probability.sum() == pytest.approx(pair["both_missed"])
    assert list(probability) == sorted(probability, reverse=True) and (probability > 0).all()
    patterns = ensembles.miss_patterns(draws, is_wrong)
    common = is_wrong & ((decisions == A) | (decisions == R)).any(axis=2).all(axis=1)
    assert sum(patterns.values()) == pytest.approx(common.sum())
    missed_any = sum(size for pattern, size in patterns.items() if any(pattern))
    every_member_rejects = ensembles.ensemble_metrics(draws, is_wrong, [0, 1, 2], "k_of_n", items=common, k=3)
    assert missed_any == pytest.approx(common.sum() * (1 - every_member_rejects["catch_rate"]))
    for pattern, size in patterns.items():
        _, listed = ensembles.missed_exactly(draws, is_wrong, np.array(pattern))
        assert listed.sum() == pytest.approx(size)


def test_upset_patterns_count_aligned_draws_each_item_once():
    # Wrong item 0: draws (A, R) against (A, A): half "both miss", half "only b misses".
    draws = ensembles.draws_from_decisions(np.array([[[A, R], [A, A]], [[R, R], [A, R]]]))
    patterns = ensembles.miss_patterns(draws, np.array([True, True]))
    assert patterns == {(True, True): 0.5, (False, True): 1.0, (False, False): 0.5}


def test_pareto_frontier_keeps_only_undominated_points():
    assert ensembles.pareto_frontier([1, 2, 3, 2], [0.5, 0.7, 0.6, 0.4]) == [True, True, False, False]


def test_an_unknown_cost_is_never_on_the_frontier_and_never_beats_a_known_one():
    # Read as $0, the unknown point would dominate every other one.
    assert ensembles.pareto_frontier([None, 1, 2], [0.9, 0.5, 0.7]) == [False, True, True]
    assert ensembles.pareto_frontier([float("nan"), 1], [0.9, 0.5]) == [False, True]


def test_a_member_without_a_measured_cost_makes_the_ensemble_cost_unknown():
    decisions, is_wrong = known_members()
    draws = ensembles.draws_from_decisions(decisions)
    result = ensembles.ensemble_metrics(draws, is_wrong, [0, 1], "any", cost_per_verdict=np.array([0.01, np.nan, 0]))
    assert result["cost_per_attempt_usd"] is None and result["cost_per_accepted_usd"] is None
    known = ensembles.ensemble_metrics(draws, is_wrong, [0, 2], "any", cost_per_verdict=np.array([0.01, np.nan, 0]))
    assert known["cost_per_attempt_usd"] == pytest.approx(0.01)


def test_more_draws_than_one_word_of_reject_bits_hold_the_same_definition():
    # 150 draws per item need three 64-bit words; the union must still follow the draws.
    rng = np.random.default_rng(8)
    decisions = rng.choice([A, R, E], p=[0.6, 0.3, 0.1], size=(12, 2, 150))
    is_wrong = rng.random(12) < 0.5
    draws = ensembles.draws_from_decisions(decisions)
    assert draws.reject_bits.shape[2] == 3
    union = ensembles.ensemble_metrics(draws, is_wrong, [0, 1], "any")
    expected = metrics.rates(enumerate_ensemble(decisions, [0, 1], 1), is_wrong)
    assert union["catch_rate"] == pytest.approx(expected["catch_rate"])
    assert union["false_reject_rate"] == pytest.approx(expected["false_reject_rate"])
    # The dense path (k of n with k = 1 is "any" by another road) agrees draw for draw.
    dense = ensembles.ensemble_metrics(draws, is_wrong, [0, 1], "k_of_n", k=1)
    assert (dense["catch_rate"], dense["draws"]) == (pytest.approx(union["catch_rate"]), union["draws"])


def test_pattern_codes_number_rows_as_a_sort_of_the_rows_would_past_62_judges_too():
    """A pattern's code decodes to its row, and codes order as the rows do (first column most significant)."""
    rng = np.random.default_rng(7)
    for n_columns in (1, 5, 62, 70):
        missed = rng.random((300, n_columns)) < 0.3
        codes, pattern = ensembles.pattern_codes(missed)
        assert [pattern(code) for code in codes] == [tuple(bool(flag) for flag in row) for row in missed]
        order = np.argsort(codes, kind="stable")
        assert [tuple(row) for row in missed[order]] == sorted(tuple(row) for row in missed)
