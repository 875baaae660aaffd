"""The loop lab's figures with 95% intervals propagated from the inputs: pure numpy, no ORM, no I/O.

`loop_figures` propagates the inputs' 95% intervals through the model (`loops.loop_model`):
it draws every rate from a split normal fitted to its interval (the Wilson intervals Docket
measures are asymmetric), resamples the latency samples (bootstrap), and reports the
2.5th-97.5th percentiles of each output over the draws as its `ci95`; the point value is the
closed form (latency: the simulation) at the point estimates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judges.metrics import Z95, percentile
from loops.loop_model import (
    DEFAULT_SEED,
    FIGURES,
    NO_CHECKER,
    CheckerInputs,
    LoopInputs,
    Measured,
    first_draft_precision,
    loop_expectation,
    simulate_questions,
    validate,
)

DEFAULT_DRAWS = 200
DEFAULT_QUESTIONS = 2_000
POINT_QUESTIONS = 10_000


def draw_rate(rng: np.random.Generator, measured: Measured, draws: int) -> np.ndarray:
    """Draw a rate from a split normal through its point and 95% interval, clipped to [0, 1]."""
    if measured.ci95 is None:
        return np.full(draws, float(measured.value))
    low, high = measured.ci95
    z = rng.standard_normal(draws)
    spread = np.where(z < 0, (measured.value - low) / Z95, (high - measured.value) / Z95)
    return np.clip(measured.value + z * spread, 0.0, 1.0)


def interval(values: np.ndarray) -> list[float] | None:
    """Return the 2.5th and 97.5th percentiles of the finite draws (None without any)."""
    values = np.asarray(values, dtype=float)
    return percentile(values[np.isfinite(values)], [2.5, 97.5])


def figure(value, draws) -> dict:
    value = float(value)
    return {"value": value if np.isfinite(value) else None, "ci95": interval(draws)}


def checker_figures(
    loop: LoopInputs,
    checker: CheckerInputs,
    *,
    seed: int = DEFAULT_SEED,
    draws: int = DEFAULT_DRAWS,
    questions: int = DEFAULT_QUESTIONS,
) -> dict:
    """Return one checker's loop figures, each {"value", "ci95"}, plus the inputs used."""
    rng = np.random.default_rng(seed)
    escalation = loop.escalation
    retries = [loop.retry_rate(k) for k in range(1, loop.max_attempts)] or [Measured(0.0)]
    point_args = {
        "accuracy": loop.accuracy.value,
        "catch": checker.catch.value,
        "false_reject": checker.false_reject.value,
        "retry_success": [m.value for m in retries],
        "retry_pass_correct": None if loop.retry_pass_correct is None else loop.retry_pass_correct.value,
        "escalation_accuracy": None if escalation is None else escalation.accuracy.value,
    }
    drawn_args = {
        "accuracy": draw_rate(rng, loop.accuracy, draws),
        "catch": draw_rate(rng, checker.catch, draws),
        "false_reject": draw_rate(rng, checker.false_reject, draws),
        "retry_success": [draw_rate(rng, m, draws) for m in retries],
        "retry_pass_correct": None
        if loop.retry_pass_correct is None
        else draw_rate(rng, loop.retry_pass_correct, draws),
        "escalation_accuracy": None if escalation is None else draw_rate(rng, escalation.accuracy, draws),
    }
    costs = {
        "max_attempts": loop.max_attempts,
        "generation_cost_usd": loop.generation_cost_usd,
        # Unknown (None) becomes NaN, so every cost figure comes out unknown rather than $0.
        "check_cost_usd": np.nan if checker.cost_usd is None else checker.cost_usd,
        "escalation_cost_usd": None if escalation is None else escalation.cost_usd,
    }
    point = loop_expectation(**point_args, **costs)
    spread = loop_expectation(**drawn_args, **costs)
    latencies = {
        "generation_latency_ms": loop.generation_latency_ms,
        "check_latency_ms": checker.latency_ms,
        "escalation_latency_ms": None if escalation is None else escalation.latency_ms,
    }
    point_args["retry_pass_correct"] = precision_if_none(point_args)
    drawn_args["retry_pass_correct"] = precision_if_none(drawn_args)
    point_sim = simulate_questions(
        rng, questions=POINT_QUESTIONS, max_attempts=loop.max_attempts, **point_args, **latencies
    )
    drawn_sim = simulate_questions(
        rng, questions=questions, max_attempts=loop.max_attempts, bootstrap=True, **drawn_args, **latencies
    )
    result = {key: figure(point[key], spread[key]) for key in FIGURES[:5]}
    result["answered_share"] = figure(point["answered_share"], spread["answered_share"])
    for q in (50, 95, 99):
        if not checker.latency_known:
            result[f"latency_ms_p{q}"] = {"value": None, "ci95": None}
            continue
        result[f"latency_ms_p{q}"] = figure(
            percentile(point_sim["latency_ms"], q), percentile(drawn_sim["latency_ms"], q, axis=1)
        )
    return result


def precision_if_none(args: dict):
    """Fill retry_pass_correct with the checker's precision on first drafts when it was not entered."""
    if args["retry_pass_correct"] is not None:
        return args["retry_pass_correct"]
    return first_draft_precision(args["accuracy"], args["catch"], args["false_reject"])


def loop_figures(
    loop: LoopInputs,
    checkers: Sequence[CheckerInputs],
    *,
    seed: int = DEFAULT_SEED,
    draws: int = DEFAULT_DRAWS,
    questions: int = DEFAULT_QUESTIONS,
) -> list[dict]:
    """Return the figures of "no checker" and then each checker, side by side (same seed each)."""
    validate(loop, checkers)
    rows = []
    for checker in [NO_CHECKER, *checkers]:
        entry = {
            "checker": checker.name,
            "name": checker.name,
            "baseline": checker.baseline,
            "catch_rate": checker.catch.as_dict(),
            "false_reject_rate": checker.false_reject.as_dict(),
            "check_cost_usd": checker.cost_usd,
            "notes": list(checker.notes),
        }
        entry.update(checker_figures(loop, checker, seed=seed, draws=draws, questions=questions))
        rows.append(entry)
    return rows
