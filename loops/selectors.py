"""Load the loop lab's inputs from the user's own measurements.

- Generator accuracy: the share of a gold-set version's items labelled correct, with its
  Wilson interval (`judges.metrics.wilson_interval`).
- A checker's catch and false-reject rates and their intervals, cost per check and latency
  samples: from the calibration report (`judges.report`), for a judge ("name", "name:N")
  or an ensemble of them ("a+b", "a+b+c@majority"); its members' latencies add up.
- Retry success rates, generator cost and latency: from recorded attempts of live requests
  (`loops.models.RequestAttempt`) when there are any, else as entered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.db.models import Avg, Count, Q
from django.utils import timezone

from judges.calibration_data import CalibrationData, load_calibration
from judges.ensembles import ENSEMBLE_RULES, members_cost
from judges.metrics import wilson_interval
from judges.report import ensemble_entry, judge_entry
from labelling.models import GoldSetVersion
from loops import policy_replay
from loops.loop_intervals import DEFAULT_DRAWS, loop_figures
from loops.loop_model import (
    DEFAULT_SEED,
    SEED_000_ESCALATION_ACCURACY,
    SEED_000_RETRY_SUCCESS,
    CheckerInputs,
    Escalation,
    LoopInputs,
    Measured,
    loop_inputs_dict,
)
from loops.models import RequestAttempt

MAX_CHECKERS = 4
GENERATION_TIER = "cheap"
ESCALATION_TIER = "strong"


def gold_set_version_get(*, name: str, number: int | None = None) -> GoldSetVersion:
    """Return the gold set's version `number` (default: its latest); ValueError if there is none."""
    versions = GoldSetVersion.objects.filter(gold_set__name=name).select_related("gold_set")
    chosen = versions.filter(number=number).first() if number else versions.order_by("-number").first()
    if chosen is None:
        raise ValueError(f"gold set {name!r} has no version {number or '(none published)'}")
    return chosen


def generator_accuracy_measure(*, data: CalibrationData) -> Measured:
    """Return the share of the version's labelled items that are correct, with its Wilson interval."""
    n = len(data.is_wrong)
    if n == 0:
        raise ValueError(f"{data.gold_set_version} has no item labelled correct or wrong")
    share = float(1 - data.is_wrong.mean())
    return Measured(share, wilson_interval(share, n), n, f"gold labels of {data.gold_set_version}")


def split_checker_specs(raw_specs) -> list[str]:
    """Flatten repeated and comma-separated --checker values; refuse more than four."""
    specs = [part.strip() for raw in raw_specs or [] for part in str(raw).split(",") if part.strip()]
    specs = [spec for spec in specs if spec.lower() not in ("none", "no-checker", "baseline")]
    if len(specs) > MAX_CHECKERS:
        raise ValueError(f"at most {MAX_CHECKERS} checkers side by side; got {len(specs)}")
    return specs


# One judge reference of a checker spec: a judge's name or slug, optionally ":N" (a version).
CHECKER_REF = re.compile(r"[\w.-]+(:v?\d+)?")


def checker_inputs_measure(*, data: CalibrationData, spec: str) -> CheckerInputs:
    """Return a judge's or an ensemble's measured rates, cost per check and latency samples."""
    members_part, _, rule = spec.partition("@")
    refs = [ref.strip() for ref in members_part.split("+") if ref.strip()]
    if not refs:
        raise ValueError(f"empty checker {spec!r}")
    if not all(CHECKER_REF.fullmatch(ref) for ref in refs):
        raise ValueError(
            f'{spec.strip()!r} is not a checker: name a judge ("name" or "name:2") or join judges with + '
            'and add an optional rule, e.g. "a+b" or "a+b+c@majority"'
        )
    columns = [data.judge_index(ref) for ref in refs]
    if len(columns) == 1 and not rule:
        entry = judge_entry(data, columns[0], 0.0)
    else:
        rule = rule or "any"
        if rule not in ENSEMBLE_RULES:
            raise ValueError(f"unknown ensemble rule {rule!r}; use one of {', '.join(ENSEMBLE_RULES)}")
        entry = ensemble_entry(data, columns, rule)
    # None when a member's verdicts carry no measured cost: the loop's costs are then unknown, not $0.
    cost = members_cost(data.cost_per_verdict, columns)
    if entry["catch_rate"] is None or entry["false_reject_rate"] is None:
        raise ValueError(f"checker {spec!r} has no judged wrong or no judged correct item on {data.gold_set_version}")
    source = f"calibration on {data.gold_set_version}"
    unmeasured = [data.judges[column].label for column in columns if not len(data.latency_of(column))]
    return CheckerInputs(
        name=spec,
        catch=Measured(entry["catch_rate"], tuple_or_none(entry["catch_rate_ci95"]), entry["judged_wrong"], source),
        false_reject=Measured(
            entry["false_reject_rate"], tuple_or_none(entry["false_reject_rate_ci95"]), entry["judged_correct"], source
        ),
        cost_usd=cost,
        latency_ms=tuple(np.asarray(data.latency_of(column), dtype=float) for column in columns),
        notes=tuple(unknown_input_notes(data, columns, unmeasured)),
    )


def unknown_input_notes(data: CalibrationData, columns: list[int], unmeasured_latency: list[str]) -> list[str]:
    """Say which of a checker's inputs were never measured, so its figures say "–" and why."""
    notes = []
    unknown_cost = [data.judges[column].label for column in columns if np.isnan(data.cost_per_verdict[column])]
    if unknown_cost:
        notes.append(f"cost unknown: {', '.join(unknown_cost)} has no measured cost (imported without one)")
    if unmeasured_latency:
        notes.append(f"latency unknown: {', '.join(unmeasured_latency)} has no measured latency")
    return notes


def tuple_or_none(interval):
    return None if interval is None else (float(interval[0]), float(interval[1]))


@dataclass(frozen=True)
class RecordedTiers:
    """What recorded attempts say: retry success per retry, and per-tier cost and latency."""

    retry_success: tuple[Measured, ...]
    generation_cost_usd: float | None
    generation_latency_ms: np.ndarray | None
    escalation_cost_usd: float | None
    escalation_latency_ms: np.ndarray | None


def recorded_tiers_measure(*, max_attempts: int) -> RecordedTiers:
    """Measure retry success and tier costs/latencies from recorded attempts (none recorded: all None).

    Retry k's success is the share of the generation tier's attempts numbered k + 1 that
    passed. The attempts belong to triage (live requests), which the loop lab stands on.
    """
    attempts = RequestAttempt.objects
    retries = []
    by_number = dict(
        (row[0], row[1:])
        for row in attempts.filter(tier=GENERATION_TIER, attempt__gte=2, attempt__lte=max_attempts)
        .values("attempt")
        .annotate(n=Count("id"), passed=Count("id", filter=Q(failure_class="")))
        .values_list("attempt", "n", "passed")
        .order_by()
    )
    for number in range(2, max_attempts + 1):
        if number not in by_number:
            break
        n, passed = by_number[number]
        share = passed / n
        retries.append(Measured(share, wilson_interval(share, n), n, "recorded attempts"))

    def tier_figures(tier):
        rows = attempts.filter(tier=tier)
        cost = rows.filter(cost_usd__isnull=False).aggregate(mean=Avg("cost_usd"))["mean"]
        latency = np.fromiter(
            rows.filter(latency_ms__isnull=False).values_list("latency_ms", flat=True)[:100_000], dtype=float
        )
        return (None if cost is None else float(cost)), (latency if latency.size else None)

    generation_cost, generation_latency = tier_figures(GENERATION_TIER)
    escalation_cost, escalation_latency = tier_figures(ESCALATION_TIER)
    return RecordedTiers(tuple(retries), generation_cost, generation_latency, escalation_cost, escalation_latency)


@dataclass(frozen=True)
class EnteredInputs:
    """What the user entered (page form or command flags); recorded attempts take precedence."""

    max_attempts: int = 3
    retry_success: tuple[float, ...] = SEED_000_RETRY_SUCCESS
    generation_cost_usd: float = 0.0
    generation_latency_ms: float = 0.0
    escalation_cost_usd: float | None = None
    escalation_accuracy: float = SEED_000_ESCALATION_ACCURACY
    escalation_latency_ms: float = 0.0
    retry_pass_correct: float | None = None


def loop_inputs_build(*, data: CalibrationData, entered: EnteredInputs) -> LoopInputs:
    """Combine the gold labels, recorded attempts and entered values into the model's inputs."""
    recorded = recorded_tiers_measure(max_attempts=entered.max_attempts)
    retries = list(recorded.retry_success)
    for number in range(len(retries) + 1, max(entered.max_attempts, 1)):
        value = entered.retry_success[min(number, len(entered.retry_success)) - 1] if entered.retry_success else None
        if value is None:
            raise ValueError(f"retry {number} was never recorded: enter its success rate")
        retries.append(Measured(float(value)))
    escalation = None
    escalation_cost = (
        entered.escalation_cost_usd if entered.escalation_cost_usd is not None else recorded.escalation_cost_usd
    )
    if escalation_cost is not None:
        escalation = Escalation(
            cost_usd=escalation_cost,
            accuracy=Measured(entered.escalation_accuracy),
            latency_ms=latency_sample(recorded.escalation_latency_ms, entered.escalation_latency_ms),
        )
    return LoopInputs(
        accuracy=generator_accuracy_measure(data=data),
        retry_success=tuple(retries),
        max_attempts=entered.max_attempts,
        generation_cost_usd=entered.generation_cost_usd
        if recorded.generation_cost_usd is None
        else recorded.generation_cost_usd,
        generation_latency_ms=latency_sample(recorded.generation_latency_ms, entered.generation_latency_ms),
        escalation=escalation,
        retry_pass_correct=None if entered.retry_pass_correct is None else Measured(entered.retry_pass_correct),
    )


def latency_sample(measured: np.ndarray | None, entered: float) -> np.ndarray:
    """Return the recorded latency sample, else the entered latency as a one-value sample."""
    return measured if measured is not None else np.array([float(entered)])


def loop_report_build(
    *, gold_set_version: GoldSetVersion, checker_specs, entered: EnteredInputs, seed: int = DEFAULT_SEED
) -> dict:
    """Return the loop lab's figures for "no checker" and up to four checkers (the JSON contract)."""
    specs = split_checker_specs(checker_specs)
    data = load_calibration(gold_set_version=gold_set_version)
    checkers = [checker_inputs_measure(data=data, spec=spec) for spec in specs]
    loop = loop_inputs_build(data=data, entered=entered)
    return {
        "gold_set": gold_set_version.gold_set.name,
        "version": gold_set_version.number,
        "seed": seed,
        "draws": DEFAULT_DRAWS,
        "inputs": loop_inputs_dict(loop),
        "checkers": loop_figures(loop, checkers, seed=seed),
    }


def live_attempt_records_list(*, since) -> dict[str, dict[str, list[policy_replay.Attempt]]]:
    """Return replay records (request id = external id) of live requests with attempts recorded since `since`."""
    attempts = RequestAttempt.objects
    recent = attempts.filter(created_at__gte=since).values("live_query")
    rows = (
        attempts.filter(live_query__in=recent)
        .order_by("live_query__query__external_id", "position")
        .values_list("live_query__query__external_id", "tier", "attempt", "failure_class", "tokens")
    )
    return policy_replay.records_from_attempts(
        (external_id, policy_replay.Attempt(tier=tier, failure_class=failure or None, tokens=tokens, attempt=attempt))
        for external_id, tier, attempt, failure, tokens in rows
    )


def live_replay_summary(*, days: int = 7, weights: dict | None = None) -> dict | None:
    """Replay the last `days` of recorded attempts under the built-in policy (None without any)."""
    records = live_attempt_records_list(since=timezone.now() - timedelta(days=days))
    if not records:
        return None
    policy = policy_replay.SEED_001_TABLE
    weights = weights or policy_replay.DEFAULT_WEIGHTS
    results = policy_replay.replay(records, policy, weights)
    summary = policy_replay.replay_summary(results, policy, weights, ledgers=False)
    summary.pop("requests")
    summary["days"] = days
    summary["request_count"] = len(results)
    return summary
