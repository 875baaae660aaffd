"""The verification ladder as judges (seed 002): parse → plan → run → non_empty → invariants.

A ladder judge's version names its rung in config (`{"rung": "run"}`) and climbs every
rung up to and including it, rejecting at the first one the SQL fails, so the judge of
rung k rejects exactly what rungs 1..k catch together. `judges.ladder` turns the rungs'
verdicts into the cumulative and marginal table.

- parse: the guard's one parse (`probes.guard.parse_sql`), read as the verifier reads it
  (`probes.outcome.parse_outcome`); a syntax error or a statement the read-only guard
  refuses is a reject, a text Docket's own size limits refused is an error.
- plan: the deterministic verifier (`probes.verifier.verify`, EXPLAIN included): the
  verifier judge's outcome, cost rules (class `timeout`) included as rejects.
- run: the SQL runs through the read-only path (`probes.execution.run_readonly`).
- non_empty: the result has at least one row.
- invariants: the result meets the item's answer-free invariants (`labelling.invariants`);
  an item without invariants passes.

Each rung returns an outcome (`probes.outcome.Outcome`); the climb stops at the first that
is not passed, and the verdict is that outcome (`VerdictResult.from_outcome`). A fault of
the warehouse (unreachable, the run out of time, a cap or limit, a role that cannot read,
an error not known to mean "this SQL is wrong") is an `error` verdict, never a reject: it
says nothing about the SQL.
"""

from __future__ import annotations

import time

from django.conf import settings

from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.verifier import verifier_outcome, verifier_reason
from labelling.invariants import InvariantsInvalid, invariants_check, invariants_validate
from probes.execution import run_readonly
from probes.guard import parse_sql
from probes.outcome import INTERNAL, Outcome, OutcomeKind, execution_outcome, parse_outcome

RUNGS = ("parse", "plan", "run", "non_empty", "invariants")
LADDER_VERSION = "ladder-1.0"


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
        state = {"query": query, "raw": {}}
        stopped_at, outcome = None, Outcome.passed(f"passed every rung up to {self.rung}")
        for rung in self.climb:
            found = getattr(self, f"check_{rung}")(state)
            match found.kind:
                case OutcomeKind.PASSED:
                    continue
                case OutcomeKind.FAILED | OutcomeKind.FAULT:
                    stopped_at, outcome = rung, found
                    break
        reason = outcome.message if stopped_at is None else f"{stopped_at}: {outcome.message}"
        context = {
            "backend": "ladder",
            "ladder_version": LADDER_VERSION,
            "rung": self.rung,
            "stopped_at": stopped_at,
        }
        if "invariants" in state:
            context["invariants"] = state["invariants"]  # what was checked travels with the verdict
        return VerdictResult.from_outcome(
            outcome,
            reason=reason,
            latency_ms=round((time.perf_counter() - started) * 1000, 1),
            raw_response=state["raw"],
            context=state.get("context", {}) | context,
        )

    # Each check returns the rung's outcome: passed climbs on, failed or fault stops the climb.

    def check_parse(self, state) -> Outcome:
        query = state["query"]
        dialect = query.warehouse.dialect if query.warehouse_id else query.dialect
        # The verifier's own reading (`probes.outcome.parse_outcome`): a text Docket's size
        # limits refused is a fault, not a reject.
        return parse_outcome(parse_sql(query.sql, dialect))

    def check_plan(self, state) -> Outcome:
        outcome, raw, context = verifier_outcome(state["query"], self.config.get("rules"))
        state["raw"], state["context"] = raw, context
        match outcome.kind:
            case OutcomeKind.FAULT:  # said as the verifier judge says it: "verifier could not check: ..."
                return Outcome.fault(outcome.cause, verifier_reason(outcome))
        return outcome

    def check_run(self, state) -> Outcome:
        query = state["query"]
        if query.warehouse_id is None:
            return Outcome.fault("no_warehouse", "the query names no warehouse to run it on")
        row_cap = int(self.config.get("row_cap") or settings.WAREHOUSE_ROW_CAP)
        try:
            result = run_readonly(warehouse=query.warehouse, sql=query.sql, row_cap=row_cap)
        except Exception as exc:  # noqa: BLE001 - a crashing warehouse is an error verdict, not a reject
            return Outcome.fault(INTERNAL, f"the warehouse failed: {type(exc).__name__}: {exc}")
        state["raw"] = {"executed": result.executed, "error_code": result.error_code, "rows": len(result.rows)}
        outcome = execution_outcome(result)
        match outcome.kind:
            case OutcomeKind.PASSED:
                state["result"] = result
            case OutcomeKind.FAILED if result.allowed:
                return Outcome.failed(outcome.failure_class, f"the database refused the query: {result.error}")
            case OutcomeKind.FAULT:
                return Outcome.fault(outcome.cause, f"the warehouse could not run it: {outcome.message}")
        return outcome

    def check_non_empty(self, state) -> Outcome:
        if state["result"].rows:
            return Outcome.passed()
        return Outcome.failed("other", "the query returned no rows")

    def check_invariants(self, state) -> Outcome:
        try:
            invariants = invariants_validate(invariants=state["query"].invariants)
        except InvariantsInvalid as exc:
            return Outcome.fault("invalid_invariants", f"the item's invariants are invalid: {exc}")
        state["invariants"] = invariants
        if not invariants:
            return Outcome.passed()
        result = state["result"]
        checked = invariants_check(
            invariants=invariants, columns=result.columns, rows=result.rows, truncated=result.truncated
        )
        if checked.violations:
            state["raw"] = {"violations": [v.kind for v in checked.violations]}
            return Outcome.failed(checked.violations[0].error_class, "; ".join(v.message for v in checked.violations))
        if checked.undecided:
            return Outcome.fault("undecided", "; ".join(checked.undecided))
        return Outcome.passed()
