"""One outcome for every checker: `passed`, `failed` (with a class) or `fault` (with a cause).

DESIGN's first principle is that a fault of a checker is never a verdict on the SQL. The
verifier, the ladder's rungs, the probe runner and every judge backend answer with an
`Outcome`, and nothing downstream reads a bare boolean: an `Outcome` refuses `bool()`, so
`if outcome:` cannot quietly fold a fault into "failed" (or "passed"); a consumer matches on
`outcome.kind`.

- `failed(failure_class, message)`: the SQL is wrong, and the class says how (seed 001's
  taxonomy: `syntax`, `dialect`, `unknown_object`, `empty_result`, and `timeout` for the
  cost rules — a cost problem of the SQL, not of the checker).
- `fault(cause, message)`: the checker could not check. Causes: `transport` (the warehouse
  could not be reached), `timeout` (the check itself did not finish in time), `privilege`
  (the role cannot read what the SQL names), `unsafe_role`, `limit` (a server limit),
  `size_limit` (Docket's own size limits refused the text), `database_error` (an error
  not known to mean "this SQL is wrong"), `internal` (the checker crashed), `no_connection`
  (a warehouse known only from a catalogue file), and the probe runner's `refused` / `error`.

`error_code_outcome` is the one place that reads `ExecutionResult.error_code`: which codes
mean the SQL is wrong, and which are the warehouse's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class OutcomeKind(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    FAULT = "fault"


# Fault causes (the vocabulary of `Outcome.cause`).
TRANSPORT = "transport"
TIMEOUT = "timeout"
PRIVILEGE = "privilege"
UNSAFE_ROLE = "unsafe_role"
SERVER_LIMIT = "limit"
SIZE_LIMIT = "size_limit"
UNKNOWN_ERROR = "database_error"
INTERNAL = "internal"
# The warehouse is known only from a catalogue file (`import_catalogue`): nothing can run on it.
NO_CONNECTION = "no_connection"

# Execution error codes (probes.results.ExecutionResult.error_code) known to mean "this SQL
# is wrong", and the class each is. Every other code is a fault of the check.
SQL_WRONG_CODES = {"syntax": "syntax", "unknown_object": "unknown_object", "dialect": "dialect"}
# Codes that are faults, under the cause they are reported as; an unlisted code is its own cause.
FAULT_CAUSES = {
    "transport": TRANSPORT,
    "timeout": TIMEOUT,
    "refused_by_database": PRIVILEGE,
    "unsafe_role": UNSAFE_ROLE,
    "limit": SERVER_LIMIT,
    # A SQLite query's own process ended by its memory or CPU limit (probes/sqlite_runner.py).
    "resource_limit": SERVER_LIMIT,
    "database_error": UNKNOWN_ERROR,
    "no_connection": NO_CONNECTION,
}


@dataclass(frozen=True)
class Outcome:
    kind: OutcomeKind
    failure_class: str = ""
    cause: str = ""
    message: str = ""

    def __post_init__(self):
        object.__setattr__(self, "kind", OutcomeKind(self.kind))
        if (self.kind is OutcomeKind.FAILED) != bool(self.failure_class):
            raise ValueError("a failed outcome, and only a failed one, carries a failure class")
        if (self.kind is OutcomeKind.FAULT) != bool(self.cause):
            raise ValueError("a fault, and only a fault, carries a cause")

    def __bool__(self):
        raise TypeError("an Outcome is passed, failed or fault: match on .kind, never on truth")

    @classmethod
    def passed(cls, message: str = "") -> Outcome:
        return cls(OutcomeKind.PASSED, message=message)

    @classmethod
    def failed(cls, failure_class: str, message: str = "") -> Outcome:
        return cls(OutcomeKind.FAILED, failure_class=failure_class, message=message)

    @classmethod
    def fault(cls, cause: str, message: str = "") -> Outcome:
        return cls(OutcomeKind.FAULT, cause=cause, message=message)

    def describe(self) -> str:
        """Say the outcome in one line, the way a person reads it."""
        match self.kind:
            case OutcomeKind.PASSED:
                return self.message or "passed"
            case OutcomeKind.FAILED:
                return f"{self.failure_class}: {self.message}" if self.message else self.failure_class
            case OutcomeKind.FAULT:
                return (
                    f"could not check ({self.cause}): {self.message}"
                    if self.message
                    else f"could not check ({self.cause})"
                )

    def as_dict(self) -> dict:
        return {
            "outcome": self.kind.value,
            "failure_class": self.failure_class or None,
            "cause": self.cause or None,
            "message": self.message,
        }


def error_code_outcome(code: str | None, message: str) -> Outcome:
    """Turn an execution error code into an outcome: the SQL's fault, or the check's."""
    code = code or "database_error"
    if code in SQL_WRONG_CODES:
        return Outcome.failed(SQL_WRONG_CODES[code], message)
    return Outcome.fault(FAULT_CAUSES.get(code, code), message)


def names_a_docket_limit(reason: str | None) -> bool:
    """True for a refusal by Docket's own size and shape limits (each names its WAREHOUSE_MAX_* setting)."""
    return "WAREHOUSE_MAX_" in (reason or "")


def parse_outcome(parsed) -> Outcome:
    """Return the outcome of reading a text once (a `probes.guard.ParsedSQL`): syntax and guard.

    A text Docket's own size and shape limits refused is a fault: nothing was checked, and
    the SQL may be right.
    """
    if parsed.stage == "ok":
        return Outcome.passed()
    verdict = parsed.verdict
    reason = verdict.reason or ""
    if verdict.kind == "limit" or names_a_docket_limit(reason):
        return Outcome.fault(SIZE_LIMIT, f"refused by Docket's own limits, so not checked: {reason}")
    if parsed.stage == "syntax":
        message = parsed.syntax_error or "parse error"
        if message.startswith("exactly one statement") or message == "empty SQL text":
            message = f"expected exactly one statement; found {len(parsed.statements)}"
        return Outcome.failed("syntax", message)
    if parsed.stage == "text":
        return Outcome.failed("dialect", f"refused before parsing: {reason}")
    if verdict.kind == "statement":
        # A DELETE or an UPDATE is no dialect slip: it is not a query at all.
        return Outcome.failed("other", f"not a read-only query: {reason}")
    return Outcome.failed("dialect", f"refused by the guard: {reason}")


def execution_outcome(result) -> Outcome:
    """Return the outcome of running a text (a `probes.results.ExecutionResult`)."""
    if not result.allowed:
        if result.error_code:  # refused before running for the warehouse's reasons (its role)
            return error_code_outcome(result.error_code, result.reason or "")
        if names_a_docket_limit(result.reason):
            return Outcome.fault(SIZE_LIMIT, f"refused by Docket's own limits, so not run: {result.reason}")
        return Outcome.failed("dialect", f"refused by the read-only guard: {result.reason}")
    if result.error or not result.executed:
        return error_code_outcome(result.error_code, result.error or "the warehouse did not run it")
    return Outcome.passed()
