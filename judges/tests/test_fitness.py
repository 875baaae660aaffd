"""Fitness (gate / monitor / explore) and the sample-size planner in each judge's entry."""

import numpy as np
import pytest

from judges import metrics
from judges.fitness import fitness_statement, kappa_interval
from judges.report import build_report
from judges.sample_size import items_for_bound, items_for_width, items_to_detect
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run


def statement(catch, wrong, false_reject, correct, kappa_ci):
    return fitness_statement(
        catch=catch,
        catch_ci=metrics.wilson_interval(catch, wrong),
        wrong=wrong,
        false_reject=false_reject,
        false_reject_ci=metrics.wilson_interval(false_reject, correct),
        correct=correct,
        kappa=None if kappa_ci is None else sum(kappa_ci) / 2,
        kappa_ci=kappa_ci,
        items=wrong + correct,
    )


def test_a_sharp_judge_on_many_items_gates():
    result = statement(0.95, 400, 0.01, 800, [0.85, 0.9])
    assert result["level"] == "gate" and result["needed"] == {}
    assert "catch rate's lower bound" in result["reasons"][0] and "at least 0.80" in result["reasons"][0]


def test_a_good_judge_on_few_items_monitors_and_says_how_many_more_would_gate_it():
    result = statement(0.9, 20, 0.02, 40, [0.62, 0.9])
    assert result["level"] == "monitor"
    needed = result["needed"]["to_gate"]
    # With the rates held, that many wrong items in all clear the bound; one fewer does not.
    total = 20 + needed["wrong"]
    assert metrics.wilson_interval(0.9, total)[0] >= 0.8 > metrics.wilson_interval(0.9, total - 1)[0]
    total = 40 + needed["correct"]
    assert metrics.wilson_interval(0.02, total)[1] <= 0.05 < metrics.wilson_interval(0.02, total - 1)[1]


def test_a_weak_judge_explores_and_more_items_cannot_make_it_gate():
    result = statement(0.5, 200, 0.2, 200, [0.1, 0.3])
    assert result["level"] == "explore"
    assert result["needed"]["to_gate"] == {"wrong": None, "correct": None}
    assert result["needed"]["to_monitor"] == {"items": None}


def random_judge(seed: int, items: int = 80):
    rng = np.random.default_rng(seed)
    is_wrong = rng.random(items) < 0.3
    return np.where(is_wrong, rng.random(items) < 0.8, rng.random(items) < 0.1).astype(float), is_wrong


def test_kappa_interval_draws_the_bootstrap_as_counts_of_each_kind_of_item():
    probs, is_wrong = random_judge(4)
    # Kinds of item in kappa_interval's order: correct ones first, each by reject share.
    kinds = sorted({(p, w) for p, w in zip(probs.tolist(), is_wrong.tolist(), strict=True)}, key=lambda k: (k[1], k[0]))
    sizes = [sum(1 for p, w in zip(probs, is_wrong, strict=True) if (p, w) == kind) for kind in kinds]
    counts = np.random.default_rng(0).multinomial(80, np.array(sizes) / 80, size=2000)
    kappas = []
    for row in counts:
        # The resample as items: each kind repeated as often as it was drawn.
        drawn = [kind for kind, times in zip(kinds, row, strict=True) for _ in range(times)]
        kappas.append(metrics.kappa_vs_gold(np.array([p for p, _ in drawn]), np.array([w for _, w in drawn])))
    expected = np.percentile([k for k in kappas if k is not None], [2.5, 97.5])
    assert kappa_interval(probs, is_wrong) == pytest.approx(list(expected), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_kappa_interval_agrees_with_resampling_the_items_one_by_one(seed):
    probs, is_wrong = random_judge(seed)
    indices = np.random.default_rng(0).integers(0, 80, size=(2000, 80))
    kappas = [metrics.kappa_vs_gold(probs[row], is_wrong[row]) for row in indices]
    by_items = np.percentile([k for k in kappas if k is not None], [2.5, 97.5])
    # Two draws of the same bootstrap distribution: equal up to Monte Carlo error.
    assert kappa_interval(probs, is_wrong) == pytest.approx(list(by_items), abs=0.03)


def test_the_planner_functions_answer_their_questions():
    n = items_for_width(0.3, 0.1)
    low, high = metrics.wilson_interval(0.3, n)
    assert high - low <= 0.1 < np.subtract(*metrics.wilson_interval(0.3, n - 1)[::-1])
    assert items_for_bound(0.7, 0.8, side="lower") is None
    assert items_to_detect(0.05, paired_variance=0.0) == items_to_detect(0.05, paired_variance=0.05 - 0.05**2)


@pytest.mark.django_db
def test_each_judge_entry_carries_its_fitness_and_plan():
    version = make_gold_set("fit", labels(30, 60))
    run = make_run(version)
    add_verdicts(run, make_judge_version("sharp"), ["reject"] * 30 + ["accept"] * 60)
    add_verdicts(run, make_judge_version("blind"), ["accept"] * 90)
    report = build_report(gold_set_version=version)
    blind, sharp = report["judges"]
    assert sharp["fitness"]["level"] == "monitor"  # perfect on 30 + 60 items: too few to gate
    # 30 of 30 caught clears 0.8 (lower bound 0.886); 0 of 60 false rejects does not clear 0.05 (0.060).
    assert sharp["fitness"]["needed"]["to_gate"] == {
        "wrong": 0,
        "correct": items_for_bound(0.0, 0.05, side="upper") - 60,
    }
    assert blind["fitness"]["level"] == "explore"
    assert set(sharp["fitness"]) == {"level", "reasons", "needed"}
    assert sharp["fitness_by_error_class"]["join_fanout"]["level"] == "monitor"
    assert sharp["planner"]["wrong_items_for_width"] == items_for_width(1.0, 0.1)
    assert sharp["planner"]["by_error_class"]["join_fanout"]["wrong_items_to_detect"] == items_to_detect(0.05, p=1.0)
