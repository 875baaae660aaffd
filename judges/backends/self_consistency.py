"""Self-consistency (seed 003): N samples of one generator model, majority vote.

Kept to show why it is weak: samples of one model on one prompt share its misreadings,
so a wrong query wins its own vote. Config: {"samples": 5, "vendor": "anthropic" |
"openai_compatible", ...the vendor backend's config}.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from judges import metrics
from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.llm import vendor_backend
from judges.models import Decision


class SelfConsistencyBackend(JudgeBackend):
    concurrent = True

    def __init__(self, judge_version):
        super().__init__(judge_version)
        self.samples = max(1, int(self.config.get("samples", 5)))
        self.inner = vendor_backend(judge_version, self.config.get("vendor", "anthropic"))
        self.pool = self.inner.pool

    def vendor_key(self) -> str:
        return self.inner.vendor_key()

    def judge(self, query) -> VerdictResult:
        results = [self.inner.judge(query) for _ in range(self.samples)]
        votes = Counter(r.decision for r in results if not r.is_error)
        totals = _sum_usage(results)
        summary = [{"decision": r.decision, "reason": r.reason[:500]} for r in results]
        # The verdict is simulated if any sample's answer came from the simulator: its trace is that sample's.
        traced = next((r for r in results if r.simulated), results[0])
        context = {
            "backend": "self_consistency",
            "simulated": traced.simulated,
            "schema": results[0].context.get("schema"),
            "votes": dict(votes),
            "samples": len(results),
        }
        raw = {"samples": summary}
        if not votes:
            return VerdictResult.error(
                f"all {len(results)} samples failed: {results[0].reason}", raw_response=raw, context=context, **totals
            ).trace_from(traced)
        # The product's one tie rule (judges.metrics): a strict majority of answered samples.
        if metrics.majority_rejects(votes[Decision.REJECT], votes[Decision.REJECT] + votes[Decision.ACCEPT]):
            rejecting = [r for r in results if r.decision == Decision.REJECT]
            error_class = Counter(r.error_class for r in rejecting).most_common(1)[0][0]
            return VerdictResult(
                decision=Decision.REJECT,
                reason=f"{votes[Decision.REJECT]} of {len(results)} samples reject: {rejecting[0].reason}",
                error_class=error_class,
                raw_response=raw,
                context=context,
                **totals,
            ).trace_from(traced)
        return VerdictResult(
            decision=Decision.ACCEPT,
            reason=f"{votes[Decision.ACCEPT]} of {len(results)} samples accept",
            raw_response=raw,
            context=context,
            **totals,
        ).trace_from(traced)


def _sum_usage(results) -> dict:
    return {
        "input_tokens": sum(r.input_tokens for r in results),
        "output_tokens": sum(r.output_tokens for r in results),
        "cache_read_tokens": sum(r.cache_read_tokens for r in results),
        "cache_write_tokens": sum(r.cache_write_tokens for r in results),
        "cost_usd": sum((r.cost_usd for r in results), Decimal("0")),
        "latency_ms": sum(r.latency_ms for r in results),
        "model_reported": next((r.model_reported for r in results if r.model_reported), ""),
    }
