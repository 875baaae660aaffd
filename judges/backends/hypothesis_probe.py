"""Hypothesis and probe (seed 003, third arrangement): the model suspects, the warehouse counts.

The LLM (config `vendor`: anthropic or openai_compatible) returns fan-out hypotheses, not
a verdict. Each suspected hypothesis is checked by `probes.fanout.check_fanout`; only a
confirmed probe rejects. A probe the guard refuses, or that errors, fails open: the
query is accepted and the probe outcome is recorded (DESIGN.md, "Fail open").
"""

from __future__ import annotations

from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.llm import vendor_backend
from judges.models import Decision
from probes.fanout import check_fanout
from probes.hypotheses import JoinFanoutHypothesis


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
            answer.decision, answer.reason = Decision.ACCEPT, answer.reason or "no fan-out suspected"
            return answer
        if query.warehouse_id is None:
            outcomes.append({"outcome": "refused", "message": "the query names no warehouse to probe"})
            answer.decision = Decision.ACCEPT
            answer.reason = "fan-out suspected but there is no warehouse to probe; failing open"
            return answer
        for hypothesis in suspected:
            outcome = self.probe(hypothesis, query)
            outcomes.append(outcome)
            if outcome["outcome"] == "confirmed":
                answer.decision = Decision.REJECT
                answer.error_class = "join_fanout"
                answer.reason = outcome["message"] or f"{hypothesis['join_table']} fans out {hypothesis['grain_key']}"
                return answer
        answer.decision = Decision.ACCEPT
        answer.reason = "; ".join(f"{o['outcome']}: {o['message']}" for o in outcomes)[:2000]
        return answer

    def probe(self, hypothesis: dict, query) -> dict:
        """Run one fan-out probe; a crash is an `error` outcome (fail open), never a reject."""
        try:
            run = check_fanout(
                hypothesis=JoinFanoutHypothesis(**hypothesis),
                warehouse=query.warehouse,
                subject_fingerprint=query.fingerprint or "",
            )
        except Exception as exc:  # noqa: BLE001 - a broken probe must not become a rejection
            return {"outcome": "error", "message": f"{type(exc).__name__}: {exc}", "hypothesis": hypothesis}
        return {
            "outcome": str(run.outcome),
            "message": run.message or "",
            "figures": getattr(run, "figures", {}) or {},
            "probe_run_id": getattr(run, "pk", None),
            "hypothesis": hypothesis,
        }
