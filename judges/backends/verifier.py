"""The deterministic SQL verifier (probes app) as a judge.

Written against the probes interface: `probes.verifier.verify(sql, catalogue, *,
warehouse=None, rules=None) -> VerifierResult(outcome, findings, verifier_version,
catalogue_version)` and `probes.selectors.catalogue_get_latest(warehouse_id=...)`.

The verdict is the verifier's outcome (`VerdictResult.from_outcome`): passed accepts; failed
rejects, the cost rules (class `timeout`) included, because catching those is what the
verifier is for; a fault — the warehouse unreachable, the EXPLAIN out of time, a role that
cannot read, a server or size limit, an unknown database error — is an `error` verdict
("verifier could not check: ..."), never a reject.
"""

from __future__ import annotations

import json
import time

from judges.backends.base import JudgeBackend, VerdictResult
from probes import selectors, verifier
from probes.outcome import INTERNAL, Outcome, OutcomeKind


def verifier_outcome(query, rules: dict | None) -> tuple[Outcome, dict, dict]:
    """Run the verifier on a query; return (its outcome, the raw result, the verdict context)."""
    if query.warehouse_id is None:
        message = "the query names no warehouse, so there is no catalogue to verify against"
        return Outcome.fault("no_warehouse", message), {}, {"backend": "verifier"}
    try:
        # Without a catalogue the verifier still checks syntax and the plan, not names.
        catalogue = selectors.catalogue_get_latest(warehouse_id=query.warehouse_id)
        result = verifier.verify(query.sql, catalogue, warehouse=query.warehouse, rules=rules)
    except Exception as exc:  # noqa: BLE001 - a crashing checker is an error verdict, not a reject
        return Outcome.fault(INTERNAL, f"verifier failed: {type(exc).__name__}: {exc}"), {}, {"backend": "verifier"}
    context = {
        "backend": "verifier",
        "verifier_version": str(result.verifier_version or ""),
        "catalogue_version": result.catalogue_version,
    }
    raw = result.as_dict()
    raw["findings"] = _jsonable(raw["findings"])
    raw.pop("rules", None)
    return result.outcome, raw, context


def verifier_reason(outcome: Outcome) -> str:
    """The reason a verifier verdict gives for its outcome."""
    match outcome.kind:
        case OutcomeKind.PASSED:
            return outcome.message or "verifier passed"
        case OutcomeKind.FAILED:
            return outcome.message
        case OutcomeKind.FAULT:
            return f"verifier could not check: {outcome.cause}: {outcome.message}"
    raise ValueError(f"unknown outcome {outcome.kind!r}")


class VerifierBackend(JudgeBackend):
    concurrent = False
    uses_database = True

    def judge(self, query) -> VerdictResult:
        started = time.perf_counter()
        outcome, raw, context = verifier_outcome(query, self.config.get("rules"))
        return VerdictResult.from_outcome(
            outcome,
            reason=verifier_reason(outcome),
            latency_ms=round((time.perf_counter() - started) * 1000, 1),
            raw_response=raw,
            context=context,
        )


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        if isinstance(value, list | tuple):
            return [_jsonable(v) for v in value]
        if hasattr(value, "model_dump"):
            return value.model_dump(mode="json")
        if hasattr(value, "__dict__"):
            return {k: _jsonable(v) for k, v in vars(value).items()}
        return str(value)
