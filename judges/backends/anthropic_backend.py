"""Claude through the official `anthropic` SDK: a forced tool call whose input is the verdict."""

from __future__ import annotations

import time

from judges.backends.base import (
    HYPOTHESES_SCHEMA,
    HYPOTHESES_TOOL_NAME,
    VERDICT_SCHEMA,
    VERDICT_TOOL_NAME,
    JudgeBackend,
    MalformedAnswer,
    VerdictResult,
)
from judges.backends.cache_minimums import anthropic_cache_minimum
from judges.backends.policy import VendorBackendMixin, VendorCallFailed, call_with_policy, milliseconds_since
from judges.backends.simulator_marker import answer_is_simulated, answer_trace
from judges.backends.vendors import anthropic_endpoint, cached_client


class AnthropicBackend(VendorBackendMixin, JudgeBackend):
    concurrent = True
    backend_name = "anthropic"
    client_kind = "anthropic"

    def __init__(self, judge_version, *, hypotheses: bool = False):
        super().__init__(judge_version)
        self.endpoint = anthropic_endpoint(self.config)
        self.setup_vendor_calls(hypotheses=hypotheses)

    def vendor_key(self) -> str:
        return f"anthropic:{self.endpoint.base_url}"

    def cache_minimum_tokens(self) -> int:
        return anthropic_cache_minimum(self.judge_version.model)

    @property
    def tool(self) -> dict:
        if self.hypotheses:
            return {
                "name": HYPOTHESES_TOOL_NAME,
                "description": "Record machine-checkable hypotheses about the SQL.",
                "input_schema": HYPOTHESES_SCHEMA,
            }
        return {
            "name": VERDICT_TOOL_NAME,
            "description": "Record the verdict on the SQL.",
            "input_schema": VERDICT_SCHEMA,
        }

    def request(self, query, prompt=None) -> dict:
        """Build the Messages request: the cached prefix (tool, instructions, shared catalogue), then the query."""
        prompt = prompt or self.prompt_for(query)
        tool = self.tool
        system = [{"type": "text", "text": prompt.instructions}]
        if prompt.shared_schema_text:
            system.append({"type": "text", "text": prompt.shared_schema_text})
        # Everything up to here (tools, then system) is identical for every query of this
        # version on this catalogue version: the breakpoint goes on the last system block.
        system[-1]["cache_control"] = {"type": "ephemeral"}
        return {
            "model": self.judge_version.model,
            "max_tokens": self.judge_version.max_tokens,
            # No temperature: this SDK's Messages API no longer takes one (the version keeps
            # it for the record and for OpenAI-compatible servers).
            "system": system,
            "tools": [tool],
            "tool_choice": {"type": "tool", "name": tool["name"]},
            "messages": [{"role": "user", "content": prompt.user_text}],
        }

    def send(self, client, request: dict):
        return client.messages.with_raw_response.create(**request)

    def transient_errors(self):
        import anthropic  # noqa: PLC0415 — a heavy SDK (tens of MB), loaded only when called

        return (anthropic.APITimeoutError, anthropic.APIConnectionError)

    @property
    def use_batches(self) -> bool:
        """Send calibration chunks through the Message Batches API (half price, slower)."""
        return bool(self.config.get("use_batches")) and not self.hypotheses

    def batch_submit(self, queries) -> str:
        """Create one Message Batch for the queries (custom_id = q<query id>); return its id."""

        if self.endpoint.missing_key:
            raise VendorCallFailed(f"{self.endpoint.missing_key} is not set", attempts={})
        client = cached_client(self.client_kind, self.endpoint, self.timeout_s)
        requests = [{"custom_id": f"q{query.pk}", "params": self.request(query)} for query in queries]
        batch, _ = call_with_policy(
            lambda: client.messages.batches.create(requests=requests),
            pool=self.pool,
            policy=self.policy,
            estimated_tokens=0,
            transient_errors=self.transient_errors(),
        )
        return batch.id

    def batch_results(self, batch_id: str, *, while_waiting):
        """Wait for the batch to end (calling while_waiting between polls); yield (query id, result).

        `while_waiting()` returns True to stop waiting (the run was stopped).
        """
        client = cached_client(self.client_kind, self.endpoint, self.timeout_s)
        transient = self.transient_errors()
        poll_s = float(self.config.get("batch_poll_s", 5))
        started = time.perf_counter()
        while True:
            batch, _ = call_with_policy(
                lambda: client.messages.batches.retrieve(batch_id),
                pool=self.pool,
                policy=self.policy,
                estimated_tokens=0,
                transient_errors=transient,
            )
            if batch.processing_status == "ended":
                break
            if while_waiting():
                return
            time.sleep(poll_s)
        latency_ms = milliseconds_since(started)
        for item in client.messages.batches.results(batch_id):
            query_id = int(item.custom_id.removeprefix("q"))
            # Each result line carries the simulator's marker when the simulator answered it.
            simulated = answer_is_simulated(body=item.model_extra)
            item_context = {"backend": "anthropic", "simulated": simulated, "batch_id": batch_id}
            trace = answer_trace(self.endpoint, simulated=simulated)
            if item.result.type == "succeeded":
                # Batches are billed at half the standard price.
                yield (
                    query_id,
                    self.result_from(
                        item.result.message, latency_ms=latency_ms, context=item_context, discount=0.5, trace=trace
                    ),
                )
            else:
                detail = item.result.model_dump(mode="json")
                yield (
                    query_id,
                    VerdictResult.error(
                        f"batch request {item.result.type}: {detail}"[:2000], context=item_context, **trace
                    ),
                )

    def result_from(self, message, *, latency_ms: float, context: dict, discount=1, trace=None) -> VerdictResult:
        """Turn a Message (or its JSON) into a result: usage and cost always, the verdict if well-formed."""
        raw = message.model_dump(mode="json") if hasattr(message, "model_dump") else dict(message)
        usage = raw.get("usage") or {}
        tokens = {
            "input_tokens": usage.get("input_tokens") or 0,
            "output_tokens": usage.get("output_tokens") or 0,
            "cache_read_tokens": usage.get("cache_read_input_tokens") or 0,
            "cache_write_tokens": usage.get("cache_creation_input_tokens") or 0,
        }
        return self.verdict_result(
            raw,
            tokens,
            answer=lambda raw: _tool_input(raw, self.tool["name"]),
            latency_ms=latency_ms,
            context=context,
            trace=trace,
            discount=discount,
        )


def _tool_input(raw: dict, tool_name: str):
    for block in raw.get("content") or []:
        if block.get("type") == "tool_use" and block.get("name") == tool_name:
            return block.get("input")
    raise MalformedAnswer(f"no {tool_name} tool call in the answer (stop_reason={raw.get('stop_reason')!r})")
