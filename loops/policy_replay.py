"""Replay recorded generation attempts under a retry/escalation policy (seed 001).

Pure Python over plain data: no ORM, no I/O. What an attempt record may say (its failure
classes, its JSONL lines) is the ingestion API's, in `triage/attempt_format.py`. A request's record is the sequence of
attempts it actually made, grouped by tier. The replay's draft function returns, for the
tier the policy asks for, that tier's next recorded outcome; a request whose record runs
out before the policy is done is `unrecorded` (the replay cannot know what a draft it never
saw would have done). Every attempt is charged to the request's ledger at
`tokens × weight[tier]` (an attempt recorded without tokens counts one unit), so
`--weights cheap=1,strong=8` prices seed 001's fixture exactly: 2, 10, 9, 1, 1 and 9 units.

Policies: seed 001's decision table (built in), "retry N times regardless", "escalate on
first failure", and user tables (failure class → action, plus how many same-tier repairs).
Actions: `repair` (retry on the same tier while fewer than `max_same_tier` failures came
before at that tier, then escalate), `escalate`, `escalate_once` (escalate on the first
failure at a tier, stop on a later one), `stop`, `stop_backoff`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from triage.attempt_format import (
    CLASS_ALIASES,
    FAILURE_CLASSES,
    ReplayInputError,
    normalise_failure_class,
    numbered_json_lines,
)

FAILURE_CLASS_SET = frozenset(FAILURE_CLASSES)
OUTCOMES = ("accepted", "stop", "stop_backoff", "escalate", "unrecorded")
ACTIONS = ("repair", "escalate", "escalate_once", "stop", "stop_backoff")
TIERS = ("cheap", "strong")
DEFAULT_WEIGHTS = {"cheap": 1.0, "strong": 8.0}


class Attempt(NamedTuple):
    """One recorded draft: its tier, its failure class (None = it passed) and its tokens."""

    tier: str
    failure_class: str | None
    tokens: float | None = None
    attempt: int | None = None


@dataclass(frozen=True)
class Policy:
    """A decision table: failure class → action, and how many same-tier repairs are allowed."""

    name: str
    actions: dict[str, str]
    max_same_tier: int = 1
    tiers: tuple[str, ...] = TIERS

    def as_dict(self) -> dict:
        return {"name": self.name, "actions": dict(self.actions), "max_same_tier": self.max_same_tier}


class LedgerEntry(NamedTuple):
    tier: str
    attempt: int
    failure_class: str | None
    tokens: float | None
    spent: float
    action: str


@dataclass
class Ledger:
    """What one request was charged, attempt by attempt (seed 001's ledger)."""

    entries: list[LedgerEntry] = field(default_factory=list)
    spent: float = 0.0
    failures: dict[str, int] = field(default_factory=dict)

    def charge(self, entry: LedgerEntry) -> None:
        self.entries.append(entry)
        self.spent += entry.spent
        if entry.failure_class is not None:
            self.failures[entry.tier] = self.failures.get(entry.tier, 0) + 1

    def failures_at(self, tier: str) -> int:
        return self.failures.get(tier, 0)


@dataclass
class ReplayResult:
    request_id: str
    outcome: str
    tier: str
    ledger: Ledger

    @property
    def spent(self) -> float:
        return self.ledger.spent


# --- policies --------------------------------------------------------------------------

SEED_001_TABLE = Policy(
    name="seed001",
    actions={
        "syntax": "repair",
        "dialect": "repair",
        "unknown_obj": "escalate",
        "empty_result": "escalate_once",
        "timeout": "stop",
        "transport": "stop_backoff",
    },
    max_same_tier=1,
)


def retry_regardless(n: int) -> Policy:
    """Retry any failure on the same tier up to n times, then climb a tier."""
    return Policy(name=f"retry{n}", actions=dict.fromkeys(FAILURE_CLASSES, "repair"), max_same_tier=n)


ESCALATE_ON_FIRST_FAILURE = Policy(
    name="escalate_first", actions=dict.fromkeys(FAILURE_CLASSES, "escalate"), max_same_tier=0
)
SEED_ALIASES = {"seed001", "seed_001", "seed-001", "decision_table", "decision-table", "default", "builtin", "table"}
ESCALATE_ALIASES = {
    "escalate",
    "escalate_first",
    "escalate-first",
    "escalate_on_first_failure",
    "escalate-on-first-failure",
    "escalate_on_failure",
}
RETRY_NAME = re.compile(r"^retry(?:[-_:]?(\d+)(?:[-_]?times)?|_regardless|-regardless)?$")
# "retry" alone: seed 000's loop, three drafts (two retries) before climbing.
DEFAULT_RETRIES = 2


def policy_from_table(table: dict, name: str = "custom") -> Policy:
    """Build a user policy from {"actions": {class: action}, "max_same_tier": n} (missing classes stop)."""
    if not isinstance(table, dict):
        raise ReplayInputError("a policy table must be a JSON object")
    actions = table.get("actions", {key: value for key, value in table.items() if key in FAILURE_CLASSES})
    if not isinstance(actions, dict):
        raise ReplayInputError('"actions" must map failure classes to actions')
    normalised = {}
    for key, action in actions.items():
        failure_class = normalise_failure_class(key, where="policy")
        if action not in ACTIONS:
            raise ReplayInputError(f"policy: unknown action {action!r} for {key!r}; use one of {', '.join(ACTIONS)}")
        normalised[failure_class] = action
    for failure_class in FAILURE_CLASSES:
        normalised.setdefault(failure_class, "stop")
    max_same_tier = table.get("max_same_tier", 1)
    if not isinstance(max_same_tier, int) or isinstance(max_same_tier, bool) or not 0 <= max_same_tier <= 100:
        raise ReplayInputError(f"policy: max_same_tier must be an integer 0..100, got {max_same_tier!r}")
    return Policy(name=str(table.get("name") or name), actions=normalised, max_same_tier=max_same_tier)


def policy_named(name: str) -> Policy:
    """Return a built-in policy: seed001 (the decision table), retryN / retry-N, escalate_first."""
    key = name.strip().lower()
    if key in SEED_ALIASES:
        return SEED_001_TABLE
    if key in ESCALATE_ALIASES:
        return ESCALATE_ON_FIRST_FAILURE
    match = RETRY_NAME.match(key)
    if match:
        return retry_regardless(int(match.group(1) or DEFAULT_RETRIES))
    raise ReplayInputError(
        f"unknown policy {name!r}: use seed001, retryN (e.g. retry2), escalate_first, or a JSON table file"
    )


def decide(policy: Policy, failure_class: str, prior_failures_at_tier: int) -> str:
    """Return what the policy does after a failure: repair, escalate, stop or stop_backoff."""
    action = policy.actions.get(failure_class, "stop")
    if action == "repair":
        return "repair" if prior_failures_at_tier < policy.max_same_tier else "escalate"
    if action == "escalate_once":
        return "escalate" if prior_failures_at_tier == 0 else "stop"
    return action


# --- the replay ------------------------------------------------------------------------


def replay_request(request_id: str, record: dict[str, list[Attempt]], policy: Policy, weights: dict) -> ReplayResult:
    """Run the policy over one request's recorded attempts (seed 001's `run`, drafted from the record)."""
    ledger = Ledger()
    tier_index = 0
    used = dict.fromkeys(record, 0)
    while True:
        tier = policy.tiers[tier_index]
        recorded = record.get(tier, ())
        position = used.get(tier, 0)
        if position >= len(recorded):
            return ReplayResult(request_id, "unrecorded", tier, ledger)
        used[tier] = position + 1
        draft = recorded[position]
        spent = (1.0 if draft.tokens is None else float(draft.tokens)) * weights.get(tier, 1.0)
        if draft.failure_class is None:
            ledger.charge(LedgerEntry(tier, position + 1, None, draft.tokens, spent, "accept"))
            return ReplayResult(request_id, "accepted", tier, ledger)
        action = decide(policy, draft.failure_class, ledger.failures_at(tier))
        ledger.charge(LedgerEntry(tier, position + 1, draft.failure_class, draft.tokens, spent, action))
        if action == "repair":
            continue
        if action == "escalate" and tier_index + 1 < len(policy.tiers):
            tier_index += 1
            continue
        return ReplayResult(request_id, action, tier, ledger)


def replay(records: dict[str, dict[str, list[Attempt]]], policy: Policy, weights: dict) -> list[ReplayResult]:
    """Replay every request (in the records' order)."""
    return [replay_request(request_id, record, policy, weights) for request_id, record in records.items()]


def replay_summary(results: list[ReplayResult], policy: Policy, weights: dict, *, ledgers: bool = True) -> dict:
    """Return the JSON contract of `replay_policy`: requests, counts per outcome, spend per accepted."""
    counts = dict.fromkeys(OUTCOMES, 0)
    accepted_by_tier = dict.fromkeys(policy.tiers, 0)
    total = 0.0
    requests = []
    for result in results:
        counts[result.outcome] += 1
        spent = result.spent
        total += spent
        if result.outcome == "accepted":
            accepted_by_tier[result.tier] = accepted_by_tier.get(result.tier, 0) + 1
        requests.append(
            {"request_id": result.request_id, "outcome": result.outcome, "tier": result.tier, "spent": spent}
        )
    summary = {
        "policy": policy.as_dict(),
        "weights": dict(weights),
        "requests": requests,
        "counts": counts,
        "accepted_by_tier": accepted_by_tier,
        "total_spent": total,
        "spend_per_accepted": total / counts["accepted"] if counts["accepted"] else None,
    }
    if ledgers:
        summary["ledgers"] = {
            result.request_id: [
                {
                    "tier": entry.tier,
                    "attempt": entry.attempt,
                    "failure_class": entry.failure_class,
                    "tokens": entry.tokens,
                    "spent": entry.spent,
                    "action": entry.action,
                }
                for entry in result.ledger.entries
            ]
            for result in results
        }
    return summary


# --- reading recorded attempts ---------------------------------------------------------


def parse_weights(text: str) -> dict[str, float]:
    """Parse "cheap=1,strong=8" into {"cheap": 1.0, "strong": 8.0}."""
    weights = dict(DEFAULT_WEIGHTS)
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        tier, sep, raw = part.partition("=")
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not sep or not tier.strip() or not value >= 0 or value == float("inf"):
            raise ReplayInputError(f"--weights: expected tier=number (e.g. cheap=1,strong=8), got {part!r}")
        weights[tier.strip()] = value
    return weights


def attempt_from_row(row, *, where: str | int, tiers: Iterable[str] = TIERS) -> tuple[str, Attempt]:
    """Validate one recorded attempt {"request_id", "tier", "attempt", "failure_class", "tokens"}.

    `where` names the record in error messages (an int is a line number).
    """
    if isinstance(where, int):
        where = f"line {where}" if not isinstance(row, dict) else where
    if not isinstance(row, dict):
        raise ReplayInputError(f"{where}: expected a JSON object")
    request_id, tier, attempt, tokens, failure = (
        row.get("request_id"),
        row.get("tier"),
        row.get("attempt"),
        row.get("tokens"),
        row.get("failure_class"),
    )
    # The common line, checked in one expression; anything else takes the careful path below.
    if (
        type(request_id) is str
        and request_id
        and tier in tiers
        and (attempt is None or type(attempt) is int and attempt >= 1)
        and (tokens is None or type(tokens) in (int, float) and tokens >= 0)
        and (failure is None or failure in FAILURE_CLASS_SET)
    ):
        return request_id, Attempt(tier, failure, tokens, attempt)
    if isinstance(where, int):
        where = f"line {where}"
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        request_id = str(request_id)
    if not isinstance(request_id, str) or not request_id:
        raise ReplayInputError(f"{where}: request_id must be a non-empty string")
    tier = row.get("tier")
    if tier not in tiers:
        raise ReplayInputError(f"{where}: tier must be one of {', '.join(tiers)}, got {tier!r}")
    attempt = row.get("attempt")
    if attempt is not None and (not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1):
        raise ReplayInputError(f"{where}: attempt must be an integer counting from 1, got {attempt!r}")
    tokens = row.get("tokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int | float) or not tokens >= 0):
        raise ReplayInputError(f"{where}: tokens must be a non-negative number or null, got {tokens!r}")
    failure_class = normalise_failure_class(row.get("failure_class"), where=where)
    return request_id, Attempt(tier=tier, failure_class=failure_class, tokens=tokens, attempt=attempt)


def records_from_attempts(rows: Iterable[tuple[str, Attempt]]) -> dict[str, dict[str, list[Attempt]]]:
    """Group attempts by request and tier, ordered by `attempt` (file order where absent).

    Raises ReplayInputError when one request records the same tier's attempt number twice.
    """
    records: dict[str, dict[str, list[Attempt]]] = {}
    for request_id, attempt in rows:
        records.setdefault(request_id, {}).setdefault(attempt.tier, []).append(attempt)
    for request_id, by_tier in records.items():
        for tier, attempts in by_tier.items():
            numbers = [a.attempt for a in attempts if a.attempt is not None]
            if len(numbers) != len(set(numbers)):
                raise ReplayInputError(
                    f"request {request_id!r} records {tier} attempt numbers twice: {sorted(numbers)}"
                )
            if len(numbers) == len(attempts):
                attempts.sort(key=lambda a: a.attempt)
    return records


def read_attempts_jsonl(lines: Iterable[str]) -> dict[str, dict[str, list[Attempt]]]:
    """Parse a JSONL attempts file; raise ReplayInputError naming the first bad line."""
    parsed = [attempt_from_row(row, where=number) for number, row in numbered_json_lines(lines, ReplayInputError)]
    return records_from_attempts(parsed)


# --- classifying Docket's own attempts -----------------------------------------------


def failure_class_from_verifier(result) -> str | None:
    """Map the deterministic verifier's result (a VerifierResult or its dict) onto seed 001's classes.

    None when it passed. A fault (the verifier could not check) is seed 001's `transport`:
    nothing about the SQL, stop and back off. The verifier's `unknown_object` is seed 001's
    `unknown_obj`; a class this table does not know falls back to `dialect` (the engine
    refused the query). A stored dict without `outcome` (written before it existed) is read
    by its `passed` and `failure_class`.
    """
    data = result.as_dict() if hasattr(result, "as_dict") else dict(result or {})
    match data.get("outcome"):
        case "passed":
            return None
        case "fault":
            return "transport"
        case None if data.get("passed", not data.get("failure_class")):
            return None
    raw = (data.get("failure_class") or "").lower()
    key = CLASS_ALIASES.get(raw, raw)
    return key if key in FAILURE_CLASSES else "dialect"
