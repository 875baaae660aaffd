"""What the verifier returns: its findings and the one outcome they add up to (seed 001's classes).

A finding is a failure of the SQL (rule, class, message) or a fault of the check (rule,
cause, message: the database could not be asked, or refused for its own reasons). The
result's outcome is the first failure when there is one — a name missing from the
catalogue or a cross join is wrong whatever the warehouse's state — else the first fault,
else passed. A fault is never a failure: the verifier judge answers `error` on it, triage
never flags on it.
"""

from dataclasses import dataclass, field

from probes.outcome import Outcome, OutcomeKind

VERIFIER_VERSION = "verifier-1.0"

# Rule name → failure class (seed 001). The cost rules are `timeout`: a cost problem of the
# SQL (it would blow the budget), not the checker running out of time.
RULE_CLASSES = {
    "syntax": "syntax",
    "read_only": "dialect",
    "unknown_table": "unknown_object",
    "unknown_column": "unknown_object",
    "cross_join": "timeout",
    "require_limit": "timeout",
    "unbounded_scan": "timeout",
    "explain": "dialect",
    "explain_cross_join": "timeout",
    "explain_unbounded_scan": "timeout",
    "empty_result": "empty_result",
}


@dataclass
class Finding:
    rule: str
    failure_class: str
    message: str
    cause: str = ""  # set on a fault: what kept the check from deciding

    @classmethod
    def fault(cls, rule: str, cause: str, message: str) -> "Finding":
        return cls(rule, "", message, cause)

    @classmethod
    def of(cls, rule: str, outcome: Outcome) -> "Finding":
        """The finding an outcome that is not `passed` makes under a rule."""
        match outcome.kind:
            case OutcomeKind.FAILED:
                return cls(rule, outcome.failure_class, outcome.message)
            case OutcomeKind.FAULT:
                return cls.fault(rule, outcome.cause, outcome.message)
        raise ValueError("a passed outcome is not a finding")

    @property
    def outcome(self) -> Outcome:
        if self.cause:
            return Outcome.fault(self.cause, self.message)
        return Outcome.failed(self.failure_class, self.message)

    def as_dict(self) -> dict:
        return {
            "rule": self.rule,
            "outcome": self.outcome.kind.value,
            "failure_class": self.failure_class or None,
            "cause": self.cause or None,
            "message": self.message,
        }


@dataclass
class VerifierResult:
    outcome: Outcome
    findings: list[dict] = field(default_factory=list)
    verifier_version: str = VERIFIER_VERSION
    catalogue_version: int | None = None
    rules: dict = field(default_factory=dict)

    @property
    def failure_class(self) -> str | None:
        """The class of a failure; None when it passed or could not check."""
        return self.outcome.failure_class or None

    @property
    def message(self) -> str | None:
        return None if self.outcome.kind is OutcomeKind.PASSED else self.outcome.message

    @property
    def rules_failed(self) -> list[str]:
        return sorted({finding["rule"] for finding in self.findings})

    def as_dict(self) -> dict:
        """Return the `verify_sql --format json` contract: `outcome` is passed, failed or fault."""
        return {
            "passed": self.outcome.kind is OutcomeKind.PASSED,
            "outcome": self.outcome.kind.value,
            "failure_class": self.failure_class,
            "cause": self.outcome.cause or None,
            "message": self.message,
            "findings": self.findings,
            "verifier_version": self.verifier_version,
            "catalogue_version": self.catalogue_version,
            "rules": self.rules,
        }


def verifier_result_build(*, findings: list[Finding], catalogue_version: int | None, rules: dict) -> VerifierResult:
    """Return the result the findings add up to: the first failure, else the first fault, else passed."""
    failures = [f for f in findings if f.outcome.kind is OutcomeKind.FAILED]
    faults = [f for f in findings if f.outcome.kind is OutcomeKind.FAULT]
    decisive = (failures or faults or [None])[0]
    return VerifierResult(
        outcome=Outcome.passed() if decisive is None else decisive.outcome,
        findings=[f.as_dict() for f in findings],
        catalogue_version=catalogue_version,
        rules=rules,
    )
