"""The triage decision: a pure function over what the checks returned and the policy's rule.

`decide` is the whole of the flagging logic and is tested on its own; `triage.pipeline`
gathers its inputs (verifier, judges, probes) and stores its outcome.
"""

import hashlib
from collections import Counter
from dataclasses import asdict, dataclass, field

from judges.metrics import majority_rejects
from probes.outcome import Outcome, OutcomeKind


@dataclass(frozen=True)
class JudgeVote:
    judge_version_id: int
    decision: str  # accept | reject | error
    error_class_guess: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ProbeFinding:
    source: str  # FANOUT_DETECTOR or "judge:<id>:<n>"
    outcome: Outcome  # the probe run's `check_outcome`: confirmed is failed, refused/error a fault


@dataclass(frozen=True)
class FlagRuleSpec:
    rule: str = "any"  # any | majority | k_of_n | verifier_only
    k: int = 1
    flag_on_verifier_failure: bool = True


@dataclass(frozen=True)
class TriageDecision:
    flagged: bool
    unjudged: bool
    reasons: list[str] = field(default_factory=list)
    judges_total: int = 0
    judges_answered: int = 0
    judges_agreeing: int = 0
    rejecting_judge_ids: list[int] = field(default_factory=list)
    probe_confirmed: bool = False
    verifier_failed: bool = False
    error_class_guess: str = ""
    # What could not be checked (a verifier or probe fault): recorded and shown, never a flag.
    notes: list[str] = field(default_factory=list)

    @property
    def priority(self) -> int:
        """One sortable number mirroring the queue order: probes, then agreement."""
        return 1000 * self.probe_confirmed + 100 * self.verifier_failed + self.judges_agreeing

    def as_dict(self) -> dict:
        return asdict(self) | {"priority": self.priority}


def judges_flag(rule: FlagRuleSpec, answered: int, rejects: int) -> bool:
    """Apply the judge part of the flag rule; errored judges neither vote nor count."""
    if rule.rule == "any":
        return rejects >= 1
    if rule.rule == "majority":
        return bool(majority_rejects(rejects, answered))  # the product's one tie rule
    if rule.rule == "k_of_n":
        return rejects >= rule.k
    return False  # verifier_only


def decide(
    *, verifier: Outcome | None, votes: list[JudgeVote], probes: list[ProbeFinding], rule: FlagRuleSpec
) -> TriageDecision:
    """Decide whether a live query goes to an analyst, and how urgently.

    A judge fault (`error`) never flags; a confirmed probe or a failed deterministic
    verifier (when the policy says so) flags on its own, because both are reproducible.
    A verifier that could not check (a fault: the warehouse stopped, a role that cannot
    read, ...) never flags: the decision notes "verifier could not check: <cause>" and the
    flag comes from the judges alone. A refused or failed probe fails open, noted the same
    way. If every judge errored (or, with no judge, the verifier could not check) and nothing
    else flagged the query, it is `unjudged`: shown to people in its own list, not dropped.
    """
    answered = [v for v in votes if v.decision in ("accept", "reject")]
    rejecting = [v for v in answered if v.decision == "reject"]
    reasons, notes = [], []
    if judges_flag(rule, len(answered), len(rejecting)):
        reasons.append(f"{len(rejecting)} of {len(votes)} judges rejected ({rule.rule})")
    verifier_failed = verifier_fault = False
    if verifier is not None:
        match verifier.kind:
            case OutcomeKind.FAILED:
                verifier_failed = True
                if rule.flag_on_verifier_failure:
                    reasons.append(f"verifier: {verifier.failure_class} {verifier.message}".strip())
            case OutcomeKind.FAULT:
                verifier_fault = True
                notes.append(f"verifier could not check: {verifier.cause}: {verifier.message}".strip())
            case OutcomeKind.PASSED:
                pass
    confirmed = []
    for probe in probes:
        match probe.outcome.kind:
            case OutcomeKind.FAILED:
                confirmed.append(probe)
                reasons.append(f"probe confirmed: {probe.outcome.message or probe.source}")
            case OutcomeKind.FAULT:
                notes.append(f"probe {probe.source} could not check: {probe.outcome.message}")
            case OutcomeKind.PASSED:
                pass
    guesses = Counter(v.error_class_guess for v in rejecting if v.error_class_guess)
    if confirmed:
        guess = "join_fanout"
    elif verifier_failed:
        guess = verifier.failure_class
    else:
        guess = guesses.most_common(1)[0][0] if guesses else ""
    flagged = bool(reasons)
    return TriageDecision(
        flagged=flagged,
        unjudged=not flagged and (not answered if votes else verifier_fault),
        reasons=reasons,
        judges_total=len(votes),
        judges_answered=len(answered),
        judges_agreeing=len(rejecting),
        rejecting_judge_ids=sorted(v.judge_version_id for v in rejecting),
        probe_confirmed=bool(confirmed),
        verifier_failed=verifier_failed,
        error_class_guess=guess,
        notes=notes,
    )


def audit_draw(*, key: str, share: float, salt: str = "docket-audit") -> bool:
    """Decide deterministically whether an unflagged query joins the audit sample.

    A hash of the key gives a uniform number in [0, 1): the same query always gets the
    same answer (a redelivered task cannot sample twice), and the rate is `share`.
    """
    if share <= 0:
        return False
    digest = hashlib.sha256(f"{salt}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def rule_from_policy(policy) -> FlagRuleSpec:
    if policy is None:
        return FlagRuleSpec()
    return FlagRuleSpec(rule=policy.flag_rule, k=policy.k, flag_on_verifier_failure=policy.flag_on_verifier_failure)
