"""The verification ladder as judges (seed 002): parse → plan → run → non_empty → invariants.

A ladder judge's version names its rung in config (`{"rung": "run"}`) and climbs every
rung up to and including it, rejecting at the first one the SQL fails, so the judge of
rung k rejects exactly what rungs 1..k catch together. `judges.ladder` turns the rungs'
verdicts into the cumulative and marginal table.

- parse: the guard's one parse (`probes.guard.parse_sql`); a syntax error or a statement
  the read-only guard refuses is a reject.
- plan: the deterministic verifier (`probes.verifier.verify`, EXPLAIN included): today's
  verifier judge, unchanged.
- run: the SQL runs through the read-only path (`probes.execution.run_readonly`).
- non_empty: the result has at least one row.
- invariants: the result meets the item's answer-free invariants (`labelling.invariants`);
  an item without invariants passes.

A fault of the warehouse (unreachable, timeout, a cap or limit, an unsafe role) is an
`error` verdict, never a reject: it says nothing about the SQL.
"""

from __future__ import annotations

import time

from django.conf import settings

from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.verifier import VerifierBackend
from judges.models import Decision
from labelling.invariants import InvariantsInvalid, invariants_check, invariants_validate
from probes.execution import run_readonly
from probes.guard import parse_sql

RUNGS = ("parse", "plan", "run", "non_empty", "invariants")
LADDER_VERSION = "ladder-1.0"
# Execution failures that are the SQL's fault; every other code is the warehouse's.
SQL_FAULTS = {"syntax": "syntax", "unknown_object": "unknown_object", "dialect": "dialect", "database_error": "other"}


def rung_of(config: dict | None) -> str:
    """Return the rung a ladder version's config names; raise ValueError for anything else."""
    rung = (config or {}).get("rung")
    if rung not in RUNGS:
        raise ValueError(f"a ladder judge needs config rung, one of {', '.join(RUNGS)}; got {rung!r}")
    return rung


def rung_problem(config: dict | None) -> str | None:
    """Say what is wrong with a ladder version's config (None when it names a known rung)."""
    try:
        rung_of(config)
    except ValueError as exc:
        return str(exc)
    return None


class LadderBackend(JudgeBackend):
    concurrent = False
    uses_database = True

    def __init__(self, judge_version):
        super().__init__(judge_version)
        self.rung = rung_of(self.config)
        self.climb = RUNGS[: RUNGS.index(self.rung) + 1]

    def judge(self, query) -> VerdictResult:
        started = time.perf_counter()
        state = {"query": query}
        result = None
        for rung in self.climb:
            result = getattr(self, f"check_{rung}")(state)
            if result is not None:
                break
        if result is None:
            result = VerdictResult(decision=Decision.ACCEPT, reason=f"passed every rung up to {self.rung}")
        result.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        result.context = {
            **result.context,
            "backend": "ladder",
            "ladder_version": LADDER_VERSION,
            "rung": self.rung,
            "stopped_at": rung if result.decision != Decision.ACCEPT else None,
        }
        if "invariants" in state:
            result.context["invariants"] = state["invariants"]  # what was checked travels with the verdict
        return result

    # Each check returns None to climb on, or the verdict that stops the climb.

    def check_parse(self, state) -> VerdictResult | None:
        query = state["query"]
        dialect = query.warehouse.dialect if query.warehouse_id else query.dialect
        parsed = parse_sql(query.sql, dialect)
        if parsed.stage == "syntax":
            return _reject("syntax", f"parse: {parsed.syntax_error or 'the text does not parse'}")
        if parsed.stage == "text" or not parsed.verdict.allowed:
            return _reject("dialect", f"parse: refused by the read-only guard: {parsed.verdict.reason}")
        return None

    def check_plan(self, state) -> VerdictResult | None:
        verdict = VerifierBackend(self.judge_version).judge(state["query"])
        if verdict.decision == Decision.ACCEPT:
            return None
        verdict.reason = f"plan: {verdict.reason}"
        return verdict

    def check_run(self, state) -> VerdictResult | None:
        query = state["query"]
        if query.warehouse_id is None:
            return VerdictResult.error("run: the query names no warehouse to run it on")
        row_cap = int(self.config.get("row_cap") or settings.WAREHOUSE_ROW_CAP)
        try:
            result = run_readonly(warehouse=query.warehouse, sql=query.sql, row_cap=row_cap)
        except Exception as exc:  # noqa: BLE001 - a crashing warehouse is an error verdict, not a reject
            return VerdictResult.error(f"run: the warehouse failed: {type(exc).__name__}: {exc}")
        raw = {"executed": result.executed, "error_code": result.error_code, "rows": len(result.rows)}
        if not result.allowed:
            if result.error_code:  # refused before running (an unsafe login role): the warehouse's fault
                return VerdictResult.error(f"run: {result.reason}", raw_response=raw)
            return _reject("dialect", f"run: refused by the read-only guard: {result.reason}", raw)
        if result.error:
            error_class = SQL_FAULTS.get(result.error_code or "")
            if error_class is None:
                return VerdictResult.error(f"run: the warehouse could not run it: {result.error}", raw_response=raw)
            return _reject(error_class, f"run: the database refused the query: {result.error}", raw)
        state["result"] = result
        return None

    def check_non_empty(self, state) -> VerdictResult | None:
        if state["result"].rows:
            return None
        return _reject("other", "non_empty: the query returned no rows")

    def check_invariants(self, state) -> VerdictResult | None:
        try:
            invariants = invariants_validate(invariants=state["query"].invariants)
        except InvariantsInvalid as exc:
            return VerdictResult.error(f"invariants: the item's invariants are invalid: {exc}")
        state["invariants"] = invariants
        if not invariants:
            return None
        result = state["result"]
        outcome = invariants_check(
            invariants=invariants, columns=result.columns, rows=result.rows, truncated=result.truncated
        )
        if outcome.violations:
            first = outcome.violations[0]
            reason = "invariants: " + "; ".join(v.message for v in outcome.violations)
            return _reject(first.error_class, reason, {"violations": [v.kind for v in outcome.violations]})
        if outcome.undecided:
            return VerdictResult.error("invariants: " + "; ".join(outcome.undecided))
        return None


def _reject(error_class: str, reason: str, raw: dict | None = None) -> VerdictResult:
    return VerdictResult(decision=Decision.REJECT, reason=reason, error_class=error_class, raw_response=raw or {})
