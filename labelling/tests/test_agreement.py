import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from labelling.agreement import (
    binary_for_category,
    cohen_kappa,
    cohen_kappa_from_confusion,
    count_table,
    fleiss_kappa,
    krippendorff_alpha_nominal,
)


def test_cohen_kappa_matches_the_hand_computed_two_by_two_table():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    assert cohen_kappa_from_confusion(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_on_three_categories_by_hand():
    # A: c c c w w u ; B: c c w w w c. p_o = 4/6.
    # marginals A: c3 w2 u1, B: c3 w3 u0 -> p_e = (9 + 6 + 0)/36 = 15/36.
    expected = (4 / 6 - 15 / 36) / (1 - 15 / 36)
    assert cohen_kappa(list("cccwwu"), list("ccwwwc")) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_agrees_with_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    cats = ["correct", "wrong:join_fanout", "wrong:syntax", "unsure"]
    a = rng.choice(cats, size=200)
    b = np.where(rng.random(200) < 0.6, a, rng.choice(cats, size=200))
    assert cohen_kappa(list(a), list(b)) == pytest.approx(cohen_kappa_score(a, b))


def test_perfect_agreement_is_one_and_total_chance_agreement_is_undefined():
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))


def test_fleiss_kappa_matches_the_classic_worked_example():
    # Fleiss (1971) as worked on Wikipedia: 10 items, 14 raters, 5 categories -> 0.210.
    table = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_kappa_with_two_raters_by_hand():
    # 4 items, 2 raters: agree, agree, disagree, agree over cats x/y.
    # counts: [2,0],[0,2],[1,1],[2,0]; P_i = 1,1,0,1 -> P_bar 0.75; p_x = 5/8, p_y = 3/8
    # P_e = 25/64 + 9/64 = 34/64; kappa = (0.75 - 34/64)/(1 - 34/64) = (14/64)/(30/64) = 7/15
    table = count_table([["x", "x"], ["y", "y"], ["x", "y"], ["x", "x"]], ["x", "y"])
    assert fleiss_kappa(table) == pytest.approx(7 / 15)


def test_fleiss_kappa_refuses_uneven_numbers_of_ratings():
    with pytest.raises(ValueError):
        fleiss_kappa(np.array([[2, 0], [1, 2]]))


def test_krippendorff_alpha_by_hand_with_uneven_raters():
    # Items: (x,x), (x,y), (y,y,y). Coincidences: item1 o_xx = 2*1/1 = 2; item2 o_xy = o_yx = 1;
    # item3 o_yy = 3*2/2 = 3. n_x = 3, n_y = 4, n = 7.
    # D_o = 2/7; D_e = (49 - 9 - 16)/(7*6) = 4/7; alpha = 1 - (2/7)/(4/7) = 1/2
    table = count_table([["x", "x"], ["x", "y"], ["y", "y", "y"]], ["x", "y"])
    assert krippendorff_alpha_nominal(table) == pytest.approx(0.5)


def test_krippendorff_alpha_ignores_items_with_one_rating():
    with_single = count_table([["x", "x"], ["x", "y"], ["y", "y", "y"], ["x"]], ["x", "y"])
    assert krippendorff_alpha_nominal(with_single) == pytest.approx(0.5)


def test_krippendorff_alpha_equals_fleiss_kappa_corrected_for_sample_size():
    # With two raters per item Fleiss' kappa is Scott's pi, and alpha = 1 - (n - 1)/n * (1 - pi)
    # where n = 2N is the number of pairable values (Krippendorff 2004).
    table = count_table([["x", "x"], ["y", "y"], ["x", "y"], ["x", "x"]], ["x", "y"])
    n_values = 8
    expected = 1 - (n_values - 1) / n_values * (1 - fleiss_kappa(table))
    assert krippendorff_alpha_nominal(table) == pytest.approx(expected)


def test_binary_recoding_for_one_error_class():
    ratings = [["wrong:syntax", "correct"], ["wrong:syntax", "wrong:syntax"]]
    assert binary_for_category(ratings, "wrong:syntax") == [[True, False], [True, True]]
