"""Hypothesis and probe (seed 003, third arrangement): the model suspects, the warehouse counts.

The LLM (config `vendor`: anthropic or openai_compatible) returns fan-out hypotheses, not
a verdict: a join table and a grain key. Each suspicion is checked by
`probes.fanout.check_fanout`, which runs a probe Docket writes from the query's own
FROM/JOIN tree (or the model's `probe_sql` only if it has exactly that shape); only a
confirmed probe rejects. A probe refused or that errors fails open (DESIGN.md): it never
rejects. When some probe ran and none confirmed, the query is accepted; when no probe could
run at all (every one refused or errored, or no warehouse to run on), nothing was checked
and the verdict is `error`, never an accept.
"""

from __future__ import annotations

from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.llm import vendor_backend
from judges.models import Decision
from probes.fanout import check_fanout
from probes.hypotheses import JoinFanoutHypothesis
from probes.outcome import INTERNAL, Outcome, OutcomeKind


class HypothesisProbeBackend(JudgeBackend):
    concurrent = True
    uses_database = True

    def __init__(self, judge_version):
        super().__init__(judge_version)
        self.inner = vendor_backend(judge_version, self.config.get("vendor", "anthropic"), hypotheses=True)
        self.pool = self.inner.pool

    def vendor_key(self) -> str:
        return self.inner.vendor_key()

    def judge(self, query) -> VerdictResult:
        answer = self.inner.judge(query)
        if answer.is_error:
            return answer
        suspected = [h for h in answer.hypotheses if h["suspected"]]
        outcomes = []
        answer.context["probe_outcomes"] = outcomes
        if not suspected:
            return _decided(answer, Outcome.passed(answer.reason or "no fan-out suspected"))
        if query.warehouse_id is None:
            outcomes.append({"outcome": "refused", "message": "the query names no warehouse to probe"})
            return _decided(answer, Outcome.fault("no_warehouse", "fan-out suspected but no warehouse to probe it on"))
        checked = []
        for hypothesis in suspected:
            outcome, record = self.probe(hypothesis, query)
            outcomes.append(record)
            if outcome.kind is OutcomeKind.FAILED:  # a confirmed probe: the first is enough
                return _decided(answer, outcome)
            checked.append(outcome)
        summary = "; ".join(f"{o['outcome']}: {o['message']}" for o in outcomes)[:2000]
        if any(o.kind is OutcomeKind.PASSED for o in checked):
            return _decided(answer, Outcome.passed(summary))
        return _decided(answer, Outcome.fault("no_probe_ran", f"no probe could run: {summary}"))

    def probe(self, hypothesis: dict, query) -> tuple[Outcome, dict]:
        """Run one fan-out probe; a crash is an `error` outcome (fail open), never a reject."""
        try:
            run = check_fanout(
                hypothesis=JoinFanoutHypothesis(**hypothesis),
                warehouse=query.warehouse,
                subject_sql=query.sql,
                subject_fingerprint=query.fingerprint or "",
            )
        except Exception as exc:  # noqa: BLE001 - a broken probe must not become a rejection
            message = f"{type(exc).__name__}: {exc}"
            return Outcome.fault(INTERNAL, message), {"outcome": "error", "message": message, "hypothesis": hypothesis}
        record = {
            "outcome": str(run.outcome),
            "message": run.message or "",
            "figures": run.figures or {},
            "probe_run_id": run.pk,
            "hypothesis": hypothesis,
        }
        return run.check_outcome, record


def _decided(answer: VerdictResult, outcome: Outcome) -> VerdictResult:
    """Give the model's answer (its usage, trace and hypotheses) the decision the probes reached."""
    match outcome.kind:
        case OutcomeKind.PASSED:
            answer.decision, answer.error_class = Decision.ACCEPT, ""
        case OutcomeKind.FAILED:
            answer.decision, answer.error_class = Decision.REJECT, outcome.failure_class
        case OutcomeKind.FAULT:
            answer.decision, answer.error_class = Decision.ERROR, ""
            answer.context["fault"] = outcome.cause
    answer.reason = outcome.message
    return answer
