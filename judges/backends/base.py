"""What every judge backend shares: the verdict it returns, the schema it asks for, costs.

A backend turns one query into one `VerdictResult`, whose decision is a checker's outcome
(`probes.outcome`): accept is passed, reject is failed with a class, error is a fault
(`VerdictResult.from_outcome`, `VerdictResult.outcome`). A vendor fault (rate limit that never
clears, 5xx after bounded retries, timeout, malformed answer) is a result with decision
`error` and the reason, never an exception and never a reject.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal

from judges.models import Decision
from judges.vendor_access import redact_secrets
from labelling.models import UNCLASSIFIED, ErrorClass
from probes.outcome import Outcome, OutcomeKind

# One list of error classes, shared with labels (labelling.models.ErrorClass).
ERROR_CLASSES = list(ErrorClass.values)

VERDICT_TOOL_NAME = "record_verdict"
HYPOTHESES_TOOL_NAME = "record_hypotheses"

# The fan-out hypothesis (probes issue / seed 003): the judge names the table it thinks
# multiplies rows and the key that should be unique; a probe then counts.
FANOUT_HYPOTHESIS_SCHEMA = {
    "type": "object",
    "properties": {
        "suspected": {"type": "boolean"},
        "join_table": {"type": ["string", "null"]},
        "grain_key": {"type": ["string", "null"]},
        "probe_sql": {
            "type": ["string", "null"],
            "description": "A single SELECT comparing COUNT(*) to COUNT(DISTINCT key).",
        },
    },
    "required": ["suspected"],
}

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["accept", "reject"]},
        "reason": {"type": "string"},
        "error_class": {"type": "string", "enum": [*ERROR_CLASSES, ""]},
        "hypotheses": {"type": "array", "items": FANOUT_HYPOTHESIS_SCHEMA},
    },
    "required": ["decision", "reason"],
}

HYPOTHESES_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "hypotheses": {"type": "array", "items": FANOUT_HYPOTHESIS_SCHEMA},
    },
    "required": ["hypotheses"],
}

# What each error class means, so a judge names the class a labeller would (DESIGN.md).
ERROR_CLASS_GUIDE = """- unknown_object: a table or column that does not exist in the schema.
- join_fanout: a one-to-many join multiplies rows, so sums and counts over the fact rows
  are inflated (e.g. summing order totals after joining order items or payments).
- misread_intent: a valid query that answers another question than the one asked.
- aggregation_grain: sums an already aggregated column, or aggregates at the wrong grain.
- missing_filter: a filter the question implies is missing (e.g. cancelled or refunded
  orders counted as sales; check the sample values of status-like columns).
- dropped_rows: an inner join on a nullable key, or a filter in the wrong place, silently
  drops rows the question needs.
- wrong_measure: the wrong column for the quantity asked (e.g. list_price instead of the
  unit_price actually charged).
- syntax: the text does not parse.
- dialect: a function or construct the warehouse's SQL dialect does not have.
- other: wrong for a reason none of the above names."""

DEFAULT_INSTRUCTIONS = (
    """You review SQL that another model wrote to answer an analyst's question.
Decide whether the SQL correctly answers the question against the schema shown: the
warehouse catalogue (tables, columns and their types, nullability, primary and unique
keys, foreign keys, row counts, and sample values of low-cardinality columns).

How to review:
1. Read the question and say to yourself which rows, grain and measure it asks for.
2. Check every table and column the SQL names against the schema.
3. Follow each join along its foreign key: a join from the one side to the many side
   repeats the one side's rows; an inner join on a nullable column drops rows.
4. Check filters against the sample values (status, method, country...) and the dates
   and units against the column types.
5. Check that the aggregate is taken at the grain the question asks for.

Reject only when you can name what is wrong, and say which error class it is:
"""
    + ERROR_CLASS_GUIDE
    + """

Accept when the SQL answers the question as asked, even if you would have written it
differently. Answer only by calling the tool you are given."""
)

DEFAULT_HYPOTHESIS_INSTRUCTIONS = """You review SQL that another model wrote to answer an analyst's question.
Do not give a verdict. If you suspect a join multiplies rows (fan-out), state it as a
hypothesis: the joined table, the key that should be unique per fact row, and one SELECT
that compares COUNT(*) with COUNT(DISTINCT key) over the same joins. If you suspect
nothing, return a hypothesis with suspected=false. Answer only by calling the tool."""


class MalformedAnswer(ValueError):
    """The model answered, but not in the shape the verdict schema demands."""


@dataclass
class VerdictResult:
    decision: str
    reason: str = ""
    error_class: str = ""
    hypotheses: list = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: Decimal = Decimal("0")
    latency_ms: float = 0.0
    model_reported: str = ""
    raw_response: dict = field(default_factory=dict)
    context: dict = field(default_factory=dict)
    # The trace, recorded at call time: where the call went and what was sent.
    simulated: bool = False
    endpoint: str = ""
    catalogue_version: int | None = None
    request_prefix: dict | None = None  # the shared, stable part (stored once by hash)
    prefix_sha256: str = ""
    request_tail: dict = field(default_factory=dict)  # this call's own part

    @classmethod
    def error(cls, reason: str, **extra) -> VerdictResult:
        return cls(decision=Decision.ERROR, reason=reason, **extra)

    @classmethod
    def from_outcome(cls, outcome: Outcome, *, reason: str | None = None, **extra) -> VerdictResult:
        """Return the verdict a checker's outcome is: passed → accept, failed → reject, fault → error.

        A failure class outside the shared list (the verifier's `timeout`, `empty_result`)
        rejects as `other`; the class itself stays in the context. A fault's cause is kept
        in the context too: an `error` verdict says why nothing was decided.
        """
        reason = outcome.message if reason is None else reason
        context = extra.pop("context", {})
        match outcome.kind:
            case OutcomeKind.PASSED:
                return cls(decision=Decision.ACCEPT, reason=reason, context=context, **extra)
            case OutcomeKind.FAILED:
                error_class = outcome.failure_class if outcome.failure_class in ERROR_CLASSES else "other"
                context = context | {"failure_class": outcome.failure_class}
                return cls(decision=Decision.REJECT, reason=reason, error_class=error_class, context=context, **extra)
            case OutcomeKind.FAULT:
                return cls(decision=Decision.ERROR, reason=reason, context=context | {"fault": outcome.cause}, **extra)
        raise ValueError(f"unknown outcome {outcome.kind!r}")

    @property
    def outcome(self) -> Outcome:
        """This verdict as a checker's outcome (a judge's `error` is a fault, never a decision)."""
        match self.decision:
            case Decision.ACCEPT:
                return Outcome.passed(self.reason)
            case Decision.REJECT:
                return Outcome.failed(self.error_class or "other", self.reason)
        return Outcome.fault(self.context.get("fault") or "judge_error", self.reason)

    @property
    def is_error(self) -> bool:
        return self.decision == Decision.ERROR

    def verdict_fields(self) -> dict:
        """Return the Verdict model fields this result fills, any key or DSN in them redacted."""
        fields = {
            "decision": self.decision,
            "reason": self.reason[:10_000],
            "error_class_guess": self.error_class if self.decision == Decision.REJECT else "",
            "hypotheses": self.hypotheses,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": self.cost_usd,
            "latency_ms": self.latency_ms,
            "model_reported": self.model_reported[:128],
            "raw_response": self.raw_response,
            "context": self.context,
            "simulated": self.simulated,
            "endpoint": self.endpoint[:200],
            "catalogue_version": self.catalogue_version,
            "request_tail": self.request_tail,
        }
        return redact_secrets(fields)

    def trace_from(self, other: VerdictResult) -> VerdictResult:
        """Copy the call trace (endpoint, request, catalogue) of another result onto this one."""
        for name in ("simulated", "endpoint", "catalogue_version", "request_prefix", "prefix_sha256", "request_tail"):
            setattr(self, name, getattr(other, name))
        return self


class JudgeBackend:
    """One small interface: `judge(query) -> VerdictResult`.

    `concurrent` says whether calls may run on many threads at once (vendor calls) or
    must run on the calling thread (checks that read the database).
    """

    concurrent = False

    def __init__(self, judge_version):
        self.judge_version = judge_version
        self.config = judge_version.config or {}

    def judge(self, query) -> VerdictResult:
        raise NotImplementedError

    def vendor_key(self) -> str:
        """Name the pool of capacity this backend draws on (for concurrency and rate limits)."""
        return f"{self.judge_version.backend}:{self.judge_version.pk}"


def instructions_for(judge_version, *, hypotheses: bool = False) -> str:
    template = (judge_version.prompt_template or "").strip()
    if template:
        return template
    return DEFAULT_HYPOTHESIS_INSTRUCTIONS if hypotheses else DEFAULT_INSTRUCTIONS


def _optional_str(value, name):
    if value is None or isinstance(value, str):
        return value
    raise MalformedAnswer(f"{name} must be a string or null, got {type(value).__name__}")


def parse_hypotheses(raw) -> list[dict]:
    """Validate a list of fan-out hypotheses; raise MalformedAnswer naming the bad field."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise MalformedAnswer("hypotheses must be a list")
    parsed = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("suspected"), bool):
            raise MalformedAnswer(f"hypotheses[{index}].suspected must be a boolean")
        parsed.append(
            {
                "suspected": item["suspected"],
                "join_table": _optional_str(item.get("join_table"), f"hypotheses[{index}].join_table"),
                "grain_key": _optional_str(item.get("grain_key"), f"hypotheses[{index}].grain_key"),
                "probe_sql": _optional_str(item.get("probe_sql"), f"hypotheses[{index}].probe_sql"),
            }
        )
    return parsed


def parse_verdict(payload) -> dict:
    """Validate a verdict object from a model; raise MalformedAnswer naming the bad field."""
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise MalformedAnswer(f"answer is not JSON: {exc.msg} at position {exc.pos}") from exc
    if not isinstance(payload, dict):
        raise MalformedAnswer("answer is not an object")
    decision = payload.get("decision")
    if decision not in (Decision.ACCEPT, Decision.REJECT):
        raise MalformedAnswer(f"decision must be accept or reject, got {decision!r}")
    reason = payload.get("reason", "")
    if not isinstance(reason, str):
        raise MalformedAnswer("reason must be a string")
    error_class = payload.get("error_class") or ""
    if error_class not in ERROR_CLASSES and error_class != "":
        raise MalformedAnswer(f"error_class {error_class!r} is not one of the known classes")
    if decision == Decision.REJECT and not error_class:
        # A reject that names no class is "unclassified", the word labels use too; "other" is
        # a class of its own (the model said so), not the lack of one.
        error_class = UNCLASSIFIED
    return {
        "decision": decision,
        "reason": reason,
        "error_class": error_class,
        "hypotheses": parse_hypotheses(payload.get("hypotheses")),
    }


def parse_hypotheses_answer(payload) -> dict:
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise MalformedAnswer(f"answer is not JSON: {exc.msg}") from exc
    if not isinstance(payload, dict) or "hypotheses" not in payload:
        raise MalformedAnswer("answer has no hypotheses")
    reason = payload.get("reason", "")
    if not isinstance(reason, str):
        raise MalformedAnswer("reason must be a string")
    return {"reason": reason, "hypotheses": parse_hypotheses(payload["hypotheses"])}


MTOK = Decimal(1_000_000)


def token_cost(
    judge_version, *, input_tokens=0, output_tokens=0, cache_read_tokens=0, cache_write_tokens=0, discount=1
):
    """Price one call in USD from the version's per-million-token prices."""
    jv = judge_version
    cost = (
        Decimal(input_tokens) * jv.price_input_per_mtok
        + Decimal(output_tokens) * jv.price_output_per_mtok
        + Decimal(cache_read_tokens) * jv.price_cache_read_per_mtok
        + Decimal(cache_write_tokens) * jv.price_cache_write_per_mtok
    ) / MTOK
    return (cost * Decimal(str(discount))).quantize(Decimal("0.00000001"))
