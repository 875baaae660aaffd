"""The triage decision: a pure function over what the checks returned and the policy's rule.

`decide` is the whole of the flagging logic and is tested on its own; `triage.pipeline`
gathers its inputs (verifier, judges, probes) and stores its outcome.
"""

import hashlib
from collections import Counter
from dataclasses import asdict, dataclass, field

from judges.metrics import majority_rejects


@dataclass(frozen=True)
class VerifierOutcome:
    passed: bool
    failure_class: str = ""
    message: str = ""


@dataclass(frozen=True)
class JudgeVote:
    judge_version_id: int
    decision: str  # accept | reject | error
    error_class_guess: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ProbeFinding:
    source: str  # FANOUT_DETECTOR or "judge:<id>:<n>"
    outcome: str  # confirmed | refuted | refused | error
    message: str = ""


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
    *, verifier: VerifierOutcome | None, votes: list[JudgeVote], probes: list[ProbeFinding], rule: FlagRuleSpec
) -> TriageDecision:
    """Decide whether a live query goes to an analyst, and how urgently.

    A judge fault (`error`) never flags; a confirmed probe or a failed deterministic
    verifier (when the policy says so) flags on its own, because both are reproducible.
    A refused or failed probe fails open. If every judge errored and nothing else
    flagged the query, it is `unjudged`: shown to people in its own list, not dropped.
    """
    answered = [v for v in votes if v.decision in ("accept", "reject")]
    rejecting = [v for v in answered if v.decision == "reject"]
    reasons = []
    if judges_flag(rule, len(answered), len(rejecting)):
        reasons.append(f"{len(rejecting)} of {len(votes)} judges rejected ({rule.rule})")
    verifier_failed = verifier is not None and not verifier.passed
    if verifier_failed and rule.flag_on_verifier_failure:
        reasons.append(f"verifier: {verifier.failure_class or 'failed'} {verifier.message}".strip())
    confirmed = [p for p in probes if p.outcome == "confirmed"]
    for probe in confirmed:
        reasons.append(f"probe confirmed: {probe.message or probe.source}")
    guesses = Counter(v.error_class_guess for v in rejecting if v.error_class_guess)
    if confirmed:
        guess = "join_fanout"
    elif verifier_failed and verifier.failure_class:
        guess = verifier.failure_class
    else:
        guess = guesses.most_common(1)[0][0] if guesses else ""
    flagged = bool(reasons)
    return TriageDecision(
        flagged=flagged,
        unjudged=bool(votes) and not answered and not flagged,
        reasons=reasons,
        judges_total=len(votes),
        judges_answered=len(answered),
        judges_agreeing=len(rejecting),
        rejecting_judge_ids=sorted(v.judge_version_id for v in rejecting),
        probe_confirmed=bool(confirmed),
        verifier_failed=verifier_failed,
        error_class_guess=guess,
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
