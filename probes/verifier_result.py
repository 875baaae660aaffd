"""What the verifier returns: its findings, each with a class from the failure taxonomy (seed 001)."""

from dataclasses import asdict, dataclass, field

VERIFIER_VERSION = "verifier-1.0"

# Rule name → failure class (seed 001).
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
    "transport": "transport",
}


@dataclass
class Finding:
    rule: str
    failure_class: str
    message: str


@dataclass
class VerifierResult:
    passed: bool
    failure_class: str | None
    message: str | None
    findings: list[dict] = field(default_factory=list)
    verifier_version: str = VERIFIER_VERSION
    catalogue_version: int | None = None
    rules: dict = field(default_factory=dict)

    @property
    def is_fault(self) -> bool:
        """True when the checker, not the SQL, failed (the warehouse was unreachable)."""
        return self.failure_class == "transport"

    @property
    def rules_failed(self) -> list[str]:
        return sorted({finding["rule"] for finding in self.findings})

    def as_dict(self) -> dict:
        return asdict(self)


def verifier_result_build(*, findings: list[Finding], catalogue_version: int | None, rules: dict) -> VerifierResult:
    """Return the result the findings add up to: the first finding decides the class and message."""
    first = findings[0] if findings else None
    return VerifierResult(
        passed=first is None,
        failure_class=first.failure_class if first else None,
        message=first.message if first else None,
        findings=[asdict(f) for f in findings],
        catalogue_version=catalogue_version,
        rules=rules,
    )
