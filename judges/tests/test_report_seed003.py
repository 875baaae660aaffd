"""Seed 003's single-run figures, reproduced from a constructed verdict set.

200 items: 40 wrong (q000–q039), 160 correct (q040–q199).
- Judge A rejects wrong q000–q022 (23 of 40) and correct q040–q058 (19 of 160); review $0.072.
- Judge B, "a similarly-sized judge from a different vendor", catches 26 of 40, and "only 9 of
  its 14 misses overlapped with the first judge's 17": B misses q023–q031 (9, shared with A)
  and q000–q004 (5 that A caught). The seed gives no false-reject count for B; we give it 12.
- EXPLAIN catches nothing and rejects nothing, at no review cost.

What the pair figures must be: both missed = 9, so "reject if either rejects" catches
40 − 9 = 31 of 40 (77.5%), not the seed's "34 of 40". 34 would need only 6 shared misses,
which contradicts its own "9 of its 14 misses overlapped". We assert 31.
"""

import pytest
from sklearn.metrics import cohen_kappa_score

from judges.calibration_data import load_calibration
from judges.models import JudgeVersion
from judges.report import build_report, ensemble_entry
from judges.tests.calibration_builders import add_verdicts, make_gold_set, make_judge_version, make_run

pytestmark = pytest.mark.django_db

WRONG, TOTAL = 40, 200
A_REJECTS = set(range(0, 23)) | set(range(40, 59))
B_REJECTS = set(range(5, 23)) | set(range(32, 40)) | set(range(50, 62))
# 12 of A's 17 misses are the generator's most common error (join_fanout), as in the seed.
JOIN_FANOUT = set(range(23, 35)) | set(range(0, 8))


def decisions(rejects: set[int]) -> list[str]:
    return ["reject" if i in rejects else "accept" for i in range(TOTAL)]


@pytest.fixture
def seed_verdicts():
    labels = [("wrong", "join_fanout" if i in JOIN_FANOUT else "misread_intent") for i in range(WRONG)]
    version = make_gold_set("seed-003", labels + [("correct", "")] * (TOTAL - WRONG))
    run = make_run(version, label="seed")
    add_verdicts(run, make_judge_version("judge-a"), decisions(A_REJECTS), cost="0.072", latency=2300)
    add_verdicts(run, make_judge_version("judge-b"), decisions(B_REJECTS), cost="0.072", latency=2000)
    add_verdicts(run, make_judge_version("explain"), decisions(set()), cost="0", latency=40)
    return version


def by_name(report):
    return {judge["name"]: judge for judge in report["judges"]}


def test_judge_a_reproduces_the_seeds_rates_and_cost(seed_verdicts):
    report = build_report(gold_set_version=seed_verdicts, generation_cost_usd=0.0125, baseline="explain")
    judge_a = by_name(report)["judge-a"]
    assert report["items"] == {"total": 200, "wrong": 40, "correct": 160}
    assert judge_a["catch_rate"] == pytest.approx(0.575)
    assert judge_a["false_reject_rate"] == pytest.approx(0.11875)
    assert judge_a["flag_rate"] == pytest.approx(0.21)
    assert judge_a["attempts_per_accepted"] == pytest.approx(1.27, abs=0.005)
    assert judge_a["cost_per_accepted_usd"] == pytest.approx(0.107, abs=0.0005)
    # The seed: 12 of A's 17 misses are join fan-outs → 8 of 20 caught in that class.
    assert judge_a["catch_rate_by_error_class"]["join_fanout"] == pytest.approx(8 / 20)
    assert judge_a["catch_rate_by_error_class"]["misread_intent"] == pytest.approx(15 / 20)


def test_break_even_against_explain_is_about_nine_times_the_nine_cents(seed_verdicts):
    """The seed: the severity at which the judge pays is "roughly nine times the nine cents"."""
    report = build_report(gold_set_version=seed_verdicts, generation_cost_usd=0.0125, baseline="explain")
    judges = by_name(report)
    extra_cost = judges["judge-a"]["cost_per_accepted_usd"] - judges["explain"]["cost_per_accepted_usd"]
    assert extra_cost == pytest.approx(0.0945, abs=0.0005)
    assert judges["judge-a"]["break_even_error_cost_usd"] == pytest.approx(extra_cost / (0.2 * 0.575))
    assert judges["judge-a"]["break_even_error_cost_usd"] == pytest.approx(0.82, abs=0.01)


def test_pair_figures_follow_from_the_seeds_overlap_statement(seed_verdicts):
    report = build_report(gold_set_version=seed_verdicts)
    judge_b = by_name(report)["judge-b"]
    assert judge_b["catch_rate"] == pytest.approx(26 / 40)
    pair = next(p for p in report["pairs"] if {p["a"], p["b"]} == {"judge-a", "judge-b"})
    assert pair["both_missed"] == pytest.approx(9)
    assert pair["miss_jaccard"] == pytest.approx(9 / (17 + 14 - 9))
    # 31 of 40, not the seed's 34: see the module docstring.
    assert pair["union_catch_rate"] == pytest.approx(31 / 40)
    assert pair["union_catch_rate"] != pytest.approx(34 / 40)
    assert pair["union_false_reject_rate"] == pytest.approx(22 / 160)
    a = [int(i in A_REJECTS) for i in range(TOTAL)]
    b = [int(i in B_REJECTS) for i in range(TOTAL)]
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(a, b))


def test_the_any_ensemble_of_a_and_b_costs_twice_the_review(seed_verdicts):
    data = load_calibration(gold_set_version=seed_verdicts)
    columns = [i for i, judge in enumerate(data.judges) if judge.name in {"judge-a", "judge-b"}]
    ensemble = ensemble_entry(data, columns, "any", generation_cost_usd=0.0125)
    assert ensemble["catch_rate"] == pytest.approx(31 / 40)
    assert ensemble["cost_per_attempt_usd"] == pytest.approx(0.0125 + 2 * 0.072)


def test_27_of_200_items_changing_verdict_across_runs_is_a_13_5_percent_flip_rate(seed_verdicts):
    second = make_run(seed_verdicts, label="seed-rerun")
    flipped = set(range(40, 67))  # 27 items: 19 false rejects turn to accepts, 8 accepts to rejects
    judge_a_version = JudgeVersion.objects.get(judge__name="judge-a")
    add_verdicts(second, judge_a_version, decisions(A_REJECTS ^ flipped))
    judge_a = by_name(build_report(gold_set_version=seed_verdicts))["judge-a"]
    assert judge_a["flip_rate"] == pytest.approx(27 / 200)
    assert judge_a["flaky"] == 27
