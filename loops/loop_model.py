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

`loops.loop_intervals` turns the model into the figures shown, with their intervals.

A retry that passes the check is correct with probability `retry_pass_correct`; by default
as often as a first draft that passed (the checker's precision on drafts), since a checker
misses wrong retries as it misses wrong first drafts. Seed 000's "fixed" reading is 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from judges.metrics import percentile

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
    """A checker's measured rates, cost per check and latency samples (one array per member, summed).

    `cost_usd` is None when it was never measured (imported verdicts): every cost figure of
    the loop is then unknown, never computed as $0. A member with an empty latency sample
    makes the latency figures unknown the same way. `notes` say which.
    """

    name: str
    catch: Measured
    false_reject: Measured
    cost_usd: float | None = 0.0
    latency_ms: tuple[np.ndarray, ...] = ()
    baseline: bool = False
    notes: tuple[str, ...] = ()

    @property
    def latency_known(self) -> bool:
        return all(np.asarray(sample).size for sample in self.latency_ms)


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
        if checker.cost_usd is not None and not checker.cost_usd >= 0:
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
        retry_pass_correct = first_draft_precision(p, c, f)
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


def first_draft_precision(accuracy, catch, false_reject):
    """Return the share of first drafts passing the check that are correct (1.0 when none pass).

    A retry that passes is correct this often unless `retry_pass_correct` was entered: the
    checker misses wrong retries as it misses wrong first drafts.
    """
    p, c, f = (np.asarray(x, dtype=float) for x in (accuracy, catch, false_reject))
    passed = p * (1 - f) + (1 - p) * (1 - c)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(passed > 0, p * (1 - f) / np.maximum(passed, 1e-300), 1.0)


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


def loop_inputs_dict(loop: LoopInputs) -> dict:
    """Describe the loop's checker-independent inputs for the JSON output and the page."""
    escalation = loop.escalation
    return {
        "generator_accuracy": loop.accuracy.as_dict(),
        "retry_success": [m.as_dict() for m in loop.retry_success],
        "max_attempts": loop.max_attempts,
        "generation_cost_usd": loop.generation_cost_usd,
        "generation_latency_ms_p50": percentile(loop.generation_latency_ms, 50),
        "retry_pass_correct": None if loop.retry_pass_correct is None else loop.retry_pass_correct.as_dict(),
        "escalation": None
        if escalation is None
        else {
            "cost_usd": escalation.cost_usd,
            "accuracy": escalation.accuracy.as_dict(),
            "latency_ms_p50": percentile(escalation.latency_ms, 50),
        },
    }
