"""What a checker does to a generation loop (seed 000), as pure numpy: no ORM, no I/O.

The loop: the generator drafts; the checker rejects a wrong draft with its catch rate and
a correct one with its false-reject rate; a rejected draft is retried with the checker's
message, and retry k passes the check with its measured success rate; after
`max_attempts` rejected drafts the question goes to the escalation tier (whose answer is
shipped unchecked), or, without one, gets no answer.

- `loop_expectation` is the closed form: expected generator calls per question, share
  escalated, cost per accepted answer, wrong answers shipped and correct drafts thrown away
  by false rejects, per 1,000 questions. It takes arrays, so one call evaluates many
  parameter draws.
- `simulate_questions` plays the same loop question by question (seeded), which also
  gives the cascade's latency distribution: a sum of generator and checker latencies per
  attempt, plus the escalation's, each drawn from its measured sample.
- `loop_figures` propagates the inputs' 95% intervals: it draws every rate from a split
  normal fitted to its interval (the Wilson intervals Docket measures are asymmetric),
  resamples the latency samples (bootstrap), and reports the 2.5th-97.5th percentiles of
  each output over the draws as its `ci95`; the point value is the closed form (latency:
  the simulation) at the point estimates.

A retry that passes the check is correct with probability `retry_pass_correct`; by default
as often as a first draft that passed (the checker's precision on drafts), since a checker
misses wrong retries as it misses wrong first drafts. Seed 000's "fixed" reading is 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

Z95 = 1.959964
DEFAULT_DRAWS = 200
DEFAULT_QUESTIONS = 2_000
POINT_QUESTIONS = 10_000
DEFAULT_SEED = 20
# Seed 000's entered defaults when nothing was measured: 71 % on the first retry, 40 % on the second.
SEED_000_RETRY_SUCCESS = (0.71, 0.40)
# ... and the reasoning model's accuracy, for an escalation tier entered without one.
SEED_000_ESCALATION_ACCURACY = 0.924
FIGURES = (
    "calls_per_question",
    "escalated_share",
    "cost_per_accepted_usd",
    "wrong_shipped_per_1000",
    "correct_rejected_per_1000",
    "latency_ms_p50",
    "latency_ms_p95",
    "latency_ms_p99",
)


@dataclass(frozen=True)
class Measured:
    """A rate with its 95% interval (None when entered, not measured) and where it came from."""

    value: float
    ci95: tuple[float, float] | None = None
    n: int | None = None
    source: str = "entered"

    def as_dict(self) -> dict:
        return {"value": self.value, "ci95": list(self.ci95) if self.ci95 else None, "n": self.n, "source": self.source}


@dataclass(frozen=True)
class CheckerInputs:
    """A checker's measured rates, cost per check and latency samples (one array per member, summed)."""

    name: str
    catch: Measured
    false_reject: Measured
    cost_usd: float = 0.0
    latency_ms: tuple[np.ndarray, ...] = ()
    baseline: bool = False


@dataclass(frozen=True)
class Escalation:
    """The tier a question goes to after max_attempts rejections: its cost, accuracy and latency."""

    cost_usd: float
    accuracy: Measured
    latency_ms: np.ndarray = field(default_factory=lambda: np.zeros(1))


@dataclass(frozen=True)
class LoopInputs:
    """Everything about the loop that does not depend on the checker."""

    accuracy: Measured
    retry_success: tuple[Measured, ...] = tuple(Measured(v, source="seed 000 default") for v in SEED_000_RETRY_SUCCESS)
    max_attempts: int = 3
    generation_cost_usd: float = 0.0
    generation_latency_ms: np.ndarray = field(default_factory=lambda: np.zeros(1))
    escalation: Escalation | None = None
    retry_pass_correct: Measured | None = None

    def retry_rate(self, retry: int) -> Measured:
        """Return retry number `retry` (from 1)'s success rate; the last one entered repeats."""
        return self.retry_success[min(retry, len(self.retry_success)) - 1]


NO_CHECKER = CheckerInputs(name="no checker", catch=Measured(0.0), false_reject=Measured(0.0), baseline=True)


def validate(loop: LoopInputs, checkers: Sequence[CheckerInputs]) -> None:
    """Raise ValueError on inputs the model cannot use, saying which."""
    if not 1 <= loop.max_attempts <= 20:
        raise ValueError(f"max attempts must be 1..20, got {loop.max_attempts}")
    if loop.max_attempts > 1 and not loop.retry_success:
        raise ValueError("enter at least one retry success rate (or record attempts to measure them)")
    rates = [("generator accuracy", loop.accuracy)] + [
        (f"retry {i + 1} success", m) for i, m in enumerate(loop.retry_success)
    ]
    if loop.escalation is not None:
        rates.append(("escalation accuracy", loop.escalation.accuracy))
        if not loop.escalation.cost_usd >= 0:
            raise ValueError("escalation cost must not be negative")
    if loop.retry_pass_correct is not None:
        rates.append(("retry pass correct", loop.retry_pass_correct))
    for checker in checkers:
        rates += [
            (f"{checker.name} catch rate", checker.catch),
            (f"{checker.name} false-reject rate", checker.false_reject),
        ]
        if not checker.cost_usd >= 0:
            raise ValueError(f"{checker.name}: cost per check must not be negative")
    for label, measured in rates:
        if measured is None or measured.value is None or not 0.0 <= measured.value <= 1.0:
            raise ValueError(f"{label} must be a share between 0 and 1, got {getattr(measured, 'value', None)!r}")
    if not loop.generation_cost_usd >= 0:
        raise ValueError("generation cost must not be negative")


# --- the closed form -------------------------------------------------------------------


def loop_expectation(
    *,
    accuracy,
    catch,
    false_reject,
    retry_success: Sequence,
    max_attempts: int,
    generation_cost_usd: float,
    check_cost_usd: float,
    escalation_cost_usd: float | None = None,
    escalation_accuracy=None,
    retry_pass_correct=None,
) -> dict:
    """Return the loop's expectations per question (arrays broadcast; floats in, floats out).

    Keys: calls_per_question (generator calls), escalated_share (rejected max_attempts
    times), answered_share, cost_per_question_usd, cost_per_accepted_usd,
    wrong_shipped_per_1000, correct_rejected_per_1000.
    """
    p, c, f = (np.asarray(x, dtype=float) for x in (accuracy, catch, false_reject))
    rejected_first = (1 - p) * c + p * f
    reach = rejected_first
    calls = np.ones_like(reach)
    retry_accepted = np.zeros_like(reach)
    for attempt in range(2, max_attempts + 1):
        success = np.asarray(retry_success[min(attempt - 1, len(retry_success)) - 1], dtype=float)
        calls = calls + reach
        retry_accepted = retry_accepted + reach * success
        reach = reach * (1 - success)
    exhausted = reach
    if retry_pass_correct is None:
        passed_first = p * (1 - f) + (1 - p) * (1 - c)
        with np.errstate(invalid="ignore", divide="ignore"):
            retry_pass_correct = np.where(passed_first > 0, p * (1 - f) / np.maximum(passed_first, 1e-300), 1.0)
    wrong = (1 - p) * (1 - c) + retry_accepted * (1 - np.asarray(retry_pass_correct, dtype=float))
    cost = calls * (generation_cost_usd + check_cost_usd)
    if escalation_cost_usd is None:
        answered = 1 - exhausted
    else:
        answered = np.ones_like(exhausted)
        wrong = wrong + exhausted * (1 - np.asarray(escalation_accuracy, dtype=float))
        cost = cost + exhausted * escalation_cost_usd
    with np.errstate(invalid="ignore", divide="ignore"):
        cost_per_accepted = np.where(answered > 0, cost / np.maximum(answered, 1e-300), np.nan)
    result = {
        "calls_per_question": calls,
        "escalated_share": exhausted,
        "answered_share": answered,
        "cost_per_question_usd": cost,
        "cost_per_accepted_usd": cost_per_accepted,
        "wrong_shipped_per_1000": 1000 * wrong,
        "correct_rejected_per_1000": 1000 * p * f,
    }
    if np.ndim(calls) == 0:
        return {key: float(value) for key, value in result.items()}
    return result


# --- the simulation --------------------------------------------------------------------


def latency_sampler(rng: np.random.Generator, samples: np.ndarray, draws: int, bootstrap: bool):
    """Return a function giving (draws, n) latencies from the sample (resampled once per draw)."""
    samples = np.asarray(samples, dtype=float)
    if samples.size == 0:
        samples = np.zeros(1)
    if bootstrap and samples.size > 1:
        size = min(samples.size, 2_000)
        pools = samples[rng.integers(samples.size, size=(draws, size))]
    else:
        pools = np.broadcast_to(samples, (draws, samples.size))

    if np.all(pools == pools.flat[0]):
        constant = float(pools.flat[0])
        return lambda n: np.full((draws, n), constant)

    def sample(n: int) -> np.ndarray:
        picks = rng.integers(pools.shape[1], size=(draws, n), dtype=np.int32)
        return np.take_along_axis(pools, picks, axis=1)

    return sample


def simulate_questions(
    rng: np.random.Generator,
    *,
    questions: int,
    accuracy,
    catch,
    false_reject,
    retry_success: Sequence,
    max_attempts: int,
    retry_pass_correct,
    escalation_accuracy=None,
    generation_latency_ms: np.ndarray,
    check_latency_ms: Sequence[np.ndarray],
    escalation_latency_ms: np.ndarray | None = None,
    bootstrap: bool = False,
) -> dict:
    """Play the loop for `questions` questions under each parameter draw; arrays are (draws, questions).

    Rate arguments are scalars or arrays of one value per draw. Returns per question:
    calls, escalated, answered, wrong_shipped, correct_rejected and latency_ms.
    """
    columns = [np.atleast_1d(np.asarray(x, dtype=float)) for x in (accuracy, catch, false_reject)]
    draws = max(len(x) for x in columns)
    p, c, f = (np.broadcast_to(x, (draws,))[:, None] for x in columns)

    def per_draw(value):
        return np.broadcast_to(np.atleast_1d(np.asarray(value, dtype=float)), (draws,))[:, None]

    shape = (draws, questions)
    gen_latency = latency_sampler(rng, generation_latency_ms, draws, bootstrap)
    check_latency = [latency_sampler(rng, samples, draws, bootstrap) for samples in check_latency_ms]

    def attempt_latency():
        total = gen_latency(questions)
        for sample in check_latency:
            total = total + sample(questions)
        return total

    correct = rng.random(shape) < p
    rejected = rng.random(shape) < np.where(correct, f, c)
    correct_rejected = correct & rejected
    calls = np.ones(shape)
    latency = attempt_latency()
    wrong_shipped = ~correct & ~rejected
    active = rejected
    for attempt in range(2, max_attempts + 1):
        success = per_draw(retry_success[min(attempt - 1, len(retry_success)) - 1])
        calls += active
        latency += np.where(active, attempt_latency(), 0.0)
        passed = active & (rng.random(shape) < success)
        wrong_shipped |= passed & (rng.random(shape) >= per_draw(retry_pass_correct))
        active = active & ~passed
    escalated = active
    answered = ~escalated
    if escalation_accuracy is not None:
        answered = np.ones(shape, dtype=bool)
        wrong_shipped |= escalated & (rng.random(shape) >= per_draw(escalation_accuracy))
        escalation = latency_sampler(rng, escalation_latency_ms, draws, bootstrap)(questions)
        latency += np.where(escalated, escalation, 0.0)
    return {
        "calls": calls,
        "escalated": escalated,
        "answered": answered,
        "wrong_shipped": wrong_shipped,
        "correct_rejected": correct_rejected,
        "latency_ms": latency,
    }


# --- intervals propagated from the inputs ----------------------------------------------


def draw_rate(rng: np.random.Generator, measured: Measured, draws: int) -> np.ndarray:
    """Draw a rate from a split normal through its point and 95% interval, clipped to [0, 1]."""
    if measured.ci95 is None:
        return np.full(draws, float(measured.value))
    low, high = measured.ci95
    z = rng.standard_normal(draws)
    spread = np.where(z < 0, (measured.value - low) / Z95, (high - measured.value) / Z95)
    return np.clip(measured.value + z * spread, 0.0, 1.0)


def interval(values: np.ndarray) -> list[float] | None:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return [float(low), float(high)]


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
        "check_cost_usd": checker.cost_usd,
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
        result[f"latency_ms_p{q}"] = figure(
            np.percentile(point_sim["latency_ms"], q), np.percentile(drawn_sim["latency_ms"], q, axis=1)
        )
    return result


def precision_if_none(args: dict):
    """Fill retry_pass_correct with the checker's precision on first drafts when it was not entered."""
    if args["retry_pass_correct"] is not None:
        return args["retry_pass_correct"]
    p, c, f = (np.asarray(args[k], dtype=float) for k in ("accuracy", "catch", "false_reject"))
    passed = p * (1 - f) + (1 - p) * (1 - c)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(passed > 0, p * (1 - f) / np.maximum(passed, 1e-300), 1.0)


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
        }
        entry.update(checker_figures(loop, checker, seed=seed, draws=draws, questions=questions))
        rows.append(entry)
    return rows


def loop_inputs_dict(loop: LoopInputs) -> dict:
    """Describe the loop's checker-independent inputs for the JSON output and the page."""
    escalation = loop.escalation
    return {
        "generator_accuracy": loop.accuracy.as_dict(),
        "retry_success": [m.as_dict() for m in loop.retry_success],
        "max_attempts": loop.max_attempts,
        "generation_cost_usd": loop.generation_cost_usd,
        "generation_latency_ms_p50": float(np.percentile(loop.generation_latency_ms, 50)),
        "retry_pass_correct": None if loop.retry_pass_correct is None else loop.retry_pass_correct.as_dict(),
        "escalation": None
        if escalation is None
        else {
            "cost_usd": escalation.cost_usd,
            "accuracy": escalation.accuracy.as_dict(),
            "latency_ms_p50": float(np.percentile(escalation.latency_ms, 50)),
        },
    }
