"""The deterministic SQL verifier (probes app) as a judge.

Written against the probes interface: `probes.verifier.verify(sql, catalogue, *,
warehouse=None, rules=None) -> VerifierResult(passed, failure_class, message, findings,
verifier_version, catalogue_version)` and `probes.selectors.catalogue_get_latest(warehouse_id=...)`.
"""

from __future__ import annotations

import json
import time

from judges.backends.base import ERROR_CLASSES, JudgeBackend, VerdictResult
from judges.models import Decision
from probes import selectors, verifier

# Verifier outcomes that mean "could not check", not "the SQL is wrong".
CHECKER_FAULTS = {"error", "timeout", "transport", "internal", "catalogue_missing"}
# The verifier's own taxonomy names that differ from the shared error-class list.
FAILURE_CLASS_ALIASES = {
    "unknown_obj": "unknown_object",
    "unknown_column": "unknown_object",
    "unknown_table": "unknown_object",
}


class VerifierBackend(JudgeBackend):
    concurrent = False
    uses_database = True

    def judge(self, query) -> VerdictResult:
        started = time.perf_counter()
        if query.warehouse_id is None:
            return VerdictResult.error("the query names no warehouse, so there is no catalogue to verify against")
        try:
            # Without a catalogue the verifier still checks syntax and the plan, not names.
            catalogue = selectors.catalogue_get_latest(warehouse_id=query.warehouse_id)
            result = verifier.verify(query.sql, catalogue, warehouse=query.warehouse, rules=self.config.get("rules"))
        except Exception as exc:  # noqa: BLE001 - a crashing checker is an error verdict, not a reject
            return VerdictResult.error(f"verifier failed: {type(exc).__name__}: {exc}")
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        context = {
            "backend": "verifier",
            "verifier_version": str(getattr(result, "verifier_version", "")),
            "catalogue_version": getattr(result, "catalogue_version", None),
        }
        raw = {"passed": result.passed, "failure_class": result.failure_class, "message": result.message}
        raw["findings"] = _jsonable(getattr(result, "findings", []))
        if result.passed:
            return VerdictResult(
                decision=Decision.ACCEPT,
                reason=result.message or "verifier passed",
                latency_ms=latency_ms,
                raw_response=raw,
                context=context,
            )
        failure = FAILURE_CLASS_ALIASES.get(result.failure_class or "", result.failure_class or "")
        if failure in CHECKER_FAULTS:
            return VerdictResult.error(
                f"verifier could not check: {result.message}", latency_ms=latency_ms, raw_response=raw, context=context
            )
        return VerdictResult(
            decision=Decision.REJECT,
            reason=result.message,
            error_class=failure if failure in ERROR_CLASSES else "other",
            latency_ms=latency_ms,
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
