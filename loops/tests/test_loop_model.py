"""The loop model: seed 000's arithmetic, the closed form against the simulation, propagated intervals."""

import numpy as np
import pytest

from loops.loop_intervals import loop_figures
from loops.loop_model import (
    FIGURES,
    CheckerInputs,
    Escalation,
    LoopInputs,
    Measured,
    loop_expectation,
    simulate_questions,
)

# Seed 000's stated inputs: 18.8 % of the cheap model's answers are wrong; the verifier
# catches 68 % of them and falsely rejects 0.4 % of correct ones; a retry passes 71 % of the
# time on the first retry and 40 % on the second; three cheap attempts at $0.0041; the rest
# escalate. The seed prices the escalation at "$0.0014" for "roughly 3 %" of questions, not
# per call; $0.06 a reasoning call is what that implies (0.0014 / 0.0228 escalated).
SEED_000 = {
    "accuracy": 1 - 0.188,
    "catch": 0.68,
    "false_reject": 0.004,
    "retry_success": [0.71, 0.40],
    "max_attempts": 3,
    "generation_cost_usd": 0.0041,
    "check_cost_usd": 0.0,
    "escalation_cost_usd": 0.06,
    "escalation_accuracy": 0.924,
}


def test_seed_000_arithmetic_about_1_17_cheap_calls_and_0_0062_a_question():
    result = loop_expectation(**SEED_000)
    assert round(result["calls_per_question"], 2) == 1.17
    assert round(result["calls_per_question"] * 0.0041, 4) == 0.0048  # "which is $0.0048"
    assert round(result["cost_per_question_usd"], 4) == 0.0062
    assert round(result["cost_per_accepted_usd"], 4) == 0.0062  # every question ends with an answer
    # 13.1 % of first attempts rejected, and 12.8 points caught of the 18.8 wrong.
    rejected_first = (1 - SEED_000["accuracy"]) * 0.68 + SEED_000["accuracy"] * 0.004
    assert round(rejected_first, 3) == 0.131
    # "Roughly 3 %" escalate: 12.8 caught → 3.7 still rejected after one retry → 2.2 after two.
    assert 0.02 < result["escalated_share"] < 0.03
    assert round(result["correct_rejected_per_1000"] / 10, 1) == 0.3


def test_a_model_graded_checker_costs_more_and_throws_away_more_correct_answers():
    deterministic = loop_expectation(**SEED_000)
    # Seed 000: 74 % catch, 6 % false rejects, $0.019 per check on every call.
    graded = loop_expectation(**(SEED_000 | {"catch": 0.74, "false_reject": 0.06, "check_cost_usd": 0.019}))
    assert graded["cost_per_accepted_usd"] > 3 * deterministic["cost_per_accepted_usd"]
    assert graded["calls_per_question"] > deterministic["calls_per_question"]
    assert graded["escalated_share"] > deterministic["escalated_share"]
    # "a 6 % rate on a model that is right 81 % of the time generates 4.9 points of unnecessary retries"
    assert round(graded["correct_rejected_per_1000"] / 10, 1) == 4.9


def test_no_checker_ships_every_wrong_draft_for_one_call():
    result = loop_expectation(**(SEED_000 | {"catch": 0.0, "false_reject": 0.0}))
    assert result["calls_per_question"] == 1.0 and result["escalated_share"] == 0.0
    assert result["wrong_shipped_per_1000"] == pytest.approx(188.0)


def test_without_an_escalation_tier_exhausted_questions_go_unanswered_and_raise_the_price_per_answer():
    result = loop_expectation(**(SEED_000 | {"escalation_cost_usd": None, "escalation_accuracy": None}))
    assert result["answered_share"] == pytest.approx(1 - result["escalated_share"])
    assert result["cost_per_accepted_usd"] == pytest.approx(result["cost_per_question_usd"] / result["answered_share"])


def test_the_closed_form_matches_the_simulation_within_its_error():
    closed = loop_expectation(**SEED_000, retry_pass_correct=0.9)
    questions = 200_000
    sim = simulate_questions(
        np.random.default_rng(7),
        questions=questions,
        accuracy=SEED_000["accuracy"],
        catch=SEED_000["catch"],
        false_reject=SEED_000["false_reject"],
        retry_success=SEED_000["retry_success"],
        max_attempts=3,
        retry_pass_correct=0.9,
        escalation_accuracy=SEED_000["escalation_accuracy"],
        generation_latency_ms=np.array([1000.0]),
        check_latency_ms=[np.array([4.0])],
        escalation_latency_ms=np.array([12_000.0]),
    )
    pairs = {
        "calls_per_question": sim["calls"],
        "escalated_share": sim["escalated"],
        "wrong_shipped_per_1000": 1000 * sim["wrong_shipped"],
        "correct_rejected_per_1000": 1000 * sim["correct_rejected"],
    }
    for key, per_question in pairs.items():
        mean = per_question.mean()
        standard_error = per_question.std() / np.sqrt(questions)
        assert abs(mean - closed[key]) < 4 * standard_error + 1e-12, (key, mean, closed[key], standard_error)
    # Latency: the mean of a cascade is the mean attempts times one attempt, plus the escalations.
    expected_latency = closed["calls_per_question"] * 1004.0 + closed["escalated_share"] * 12_000.0
    assert abs(sim["latency_ms"].mean() - expected_latency) < 4 * sim["latency_ms"].std() / np.sqrt(questions)


def seed_loop(**changes) -> LoopInputs:
    rng = np.random.default_rng(3)
    fields = {
        "accuracy": Measured(0.812, (0.78, 0.84), 600),
        "generation_cost_usd": 0.0041,
        "generation_latency_ms": rng.lognormal(np.log(1000), 0.15, 400),
        "escalation": Escalation(0.06, Measured(0.924), rng.lognormal(np.log(12_000), 0.2, 200)),
    }
    return LoopInputs(**(fields | changes))


VERIFIER = CheckerInputs(
    "verifier", Measured(0.68, (0.61, 0.74)), Measured(0.004, (0.001, 0.02)), 0.0, (np.full(5, 4.0),)
)
GRADED = CheckerInputs(
    "graded", Measured(0.74, (0.67, 0.80)), Measured(0.06, (0.04, 0.09)), 0.019, (np.full(5, 2100.0),)
)


def test_figures_carry_every_contract_key_with_an_interval_around_the_value():
    rows = loop_figures(seed_loop(), [VERIFIER, GRADED])
    assert [row["checker"] for row in rows] == ["no checker", "verifier", "graded"]
    assert rows[0]["baseline"] and not rows[1]["baseline"]
    for row in rows:
        for key in FIGURES:
            value, (low, high) = row[key]["value"], row[key]["ci95"]
            assert low <= value + 1e-9 and value <= high + 1e-9, (row["checker"], key, value, low, high)
    verifier = rows[1]
    assert round(verifier["calls_per_question"]["value"], 2) == 1.17
    assert round(verifier["cost_per_accepted_usd"]["value"], 4) == 0.0062
    assert verifier["calls_per_question"]["ci95"][1] > verifier["calls_per_question"]["ci95"][0]


def test_the_cascades_latency_is_a_distribution_with_the_escalation_in_its_tail():
    rows = {row["checker"]: row for row in loop_figures(seed_loop(), [VERIFIER, GRADED])}
    verifier, baseline = rows["verifier"], rows["no checker"]
    # p50 as the bare cheap model (most questions pass first time); p99 on the escalation path.
    assert verifier["latency_ms_p50"]["value"] == pytest.approx(baseline["latency_ms_p50"]["value"], rel=0.05)
    assert verifier["latency_ms_p99"]["value"] > 10_000
    assert verifier["latency_ms_p95"]["value"] < verifier["latency_ms_p99"]["value"]
    # A model-graded check adds its 2.1 s to every attempt.
    assert rows["graded"]["latency_ms_p50"]["value"] > verifier["latency_ms_p50"]["value"] + 2000


def test_wider_input_intervals_give_wider_output_intervals():
    narrow = loop_figures(seed_loop(accuracy=Measured(0.812, (0.80, 0.82))), [VERIFIER])[1]
    wide = loop_figures(seed_loop(accuracy=Measured(0.812, (0.70, 0.90))), [VERIFIER])[1]

    def width(row):
        low, high = row["wrong_shipped_per_1000"]["ci95"]
        return high - low

    assert width(wide) > 2 * width(narrow)


def test_the_figures_are_reproducible_under_a_seed():
    first = loop_figures(seed_loop(), [VERIFIER], seed=11)
    again = loop_figures(seed_loop(), [VERIFIER], seed=11)
    assert first == again


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"max_attempts": 0}, "max attempts"),
        ({"accuracy": Measured(1.3)}, "generator accuracy"),
        ({"retry_success": (Measured(-0.1),)}, "retry 1 success"),
        ({"generation_cost_usd": -1.0}, "generation cost"),
    ],
)
def test_inputs_the_model_cannot_use_are_refused_saying_which(changes, message):
    with pytest.raises(ValueError, match=message):
        loop_figures(seed_loop(**changes), [VERIFIER])
