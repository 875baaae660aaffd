"""Any OpenAI-compatible server (OpenAI, vLLM, Ollama...) through the official `openai` SDK.

Structured output is a forced function call by default, or a JSON-schema response format
when the version's config says `"structured": "json_schema"`.
"""

from __future__ import annotations

from judges.backends.base import (
    HYPOTHESES_SCHEMA,
    HYPOTHESES_TOOL_NAME,
    VERDICT_SCHEMA,
    VERDICT_TOOL_NAME,
    JudgeBackend,
    MalformedAnswer,
    VerdictResult,
)
from judges.backends.cache_minimums import OPENAI_CACHE_MINIMUM
from judges.backends.policy import VendorBackendMixin
from judges.backends.vendors import openai_endpoint


class OpenAICompatibleBackend(VendorBackendMixin, JudgeBackend):
    concurrent = True
    backend_name = "openai_compatible"
    client_kind = "openai"

    def __init__(self, judge_version, *, hypotheses: bool = False):
        super().__init__(judge_version)
        self.endpoint = openai_endpoint(self.config)
        self.structured = self.config.get("structured", "tool")
        self.setup_vendor_calls(hypotheses=hypotheses)

    def vendor_key(self) -> str:
        return f"openai:{self.endpoint.base_url}"

    def cache_minimum_tokens(self) -> int:
        return OPENAI_CACHE_MINIMUM

    @property
    def tool_name(self) -> str:
        return HYPOTHESES_TOOL_NAME if self.hypotheses else VERDICT_TOOL_NAME

    @property
    def schema(self) -> dict:
        return HYPOTHESES_SCHEMA if self.hypotheses else VERDICT_SCHEMA

    def request(self, query, prompt=None) -> dict:
        prompt = prompt or self.prompt_for(query)
        system = prompt.instructions
        if prompt.shared_schema_text:
            system += "\n\n" + prompt.shared_schema_text
        # The static part (tools, instructions, the shared catalogue) goes first so servers
        # with automatic prefix caching reuse it; the query comes last.
        request = {
            "model": self.judge_version.model,
            "max_tokens": self.judge_version.max_tokens,
            "temperature": self.judge_version.temperature,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt.user_text},
            ],
        }
        if self.structured == "json_schema":
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": self.tool_name, "schema": self.schema},
            }
        else:
            request["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": self.tool_name,
                        "description": "Record the answer.",
                        "parameters": self.schema,
                    },
                }
            ]
            request["tool_choice"] = {"type": "function", "function": {"name": self.tool_name}}
        return request

    def send(self, client, request: dict):
        return client.chat.completions.with_raw_response.create(**request)

    def transient_errors(self):
        import openai  # noqa: PLC0415 — a heavy SDK (tens of MB), loaded only when called

        return (openai.APITimeoutError, openai.APIConnectionError)

    def result_from(self, completion, *, latency_ms: float, context: dict, trace=None) -> VerdictResult:
        """Turn a ChatCompletion (or its JSON) into a result: usage and cost always, the verdict if well-formed."""
        raw = completion.model_dump(mode="json") if hasattr(completion, "model_dump") else dict(completion)
        usage = raw.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        tokens = {
            "input_tokens": max(0, (usage.get("prompt_tokens") or 0) - cached),
            "output_tokens": usage.get("completion_tokens") or 0,
            "cache_read_tokens": cached,
            "cache_write_tokens": 0,
        }
        return self.verdict_result(
            raw, tokens, answer=self._payload, latency_ms=latency_ms, context=context, trace=trace
        )

    def _payload(self, raw: dict):
        choices = raw.get("choices") or []
        if not choices:
            raise MalformedAnswer("no choices in the answer")
        message = choices[0].get("message") or {}
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if function.get("name") == self.tool_name:
                return function.get("arguments") or ""
        if self.structured == "json_schema" and message.get("content"):
            return message["content"]
        raise MalformedAnswer(
            f"no {self.tool_name} call in the answer (finish_reason={choices[0].get('finish_reason')!r})"
        )
