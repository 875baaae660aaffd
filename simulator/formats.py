"""The vendors' wire formats: read an Anthropic or OpenAI request, write their answers.

Only shapes live here; what the answer says comes from `vendor.Simulator`. Every answer
carries the simulator's marker (`conventions.py`): a field in each JSON body and a header
on every response. Docket's backends record a verdict as simulated from that marker alone
(`judges/backends/simulator_marker.py`).
"""

from __future__ import annotations

import json
import re
import time
import uuid

from simulator.conventions import SIMULATOR_FIELD, SIMULATOR_HEADER
from simulator.vendor import ApiError

SQL_BLOCK = re.compile(r"<sql[^>]*>\s*(.*?)\s*</sql>", re.S)


def json_response(status: int, payload: dict, headers: dict | None = None) -> tuple[int, dict, bytes]:
    """A JSON answer, stamped with the simulator's marker in its headers and body (errors included)."""
    if isinstance(payload, dict):
        payload = {**payload, SIMULATOR_FIELD: True}
    return status, stamped({"content-type": "application/json", **(headers or {})}), json.dumps(payload).encode()


def stamped(headers: dict) -> dict:
    """Response headers with the simulator's marker."""
    return {**headers, SIMULATOR_HEADER: "1"}


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def _sql_of(text: str) -> str:
    match = SQL_BLOCK.search(text)
    return match.group(1) if match else text


def _blocks(content) -> list:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def parse_anthropic(body: dict) -> dict:
    """Read a Messages request; `static` is the prompt up to its last cache breakpoint.

    The prompt is ordered tools, system, messages (as Anthropic caches it); everything up to
    and including the last block carrying cache_control is the cacheable prefix.
    """
    if not body.get("model") or not body.get("messages"):
        raise ApiError(400, "invalid_request_error", "model and messages are required")
    tools = body.get("tools") or []
    choice = body.get("tool_choice") or {}
    tool = choice.get("name") or (tools[0]["name"] if tools else "")
    pieces = [(json.dumps(t), bool(isinstance(t, dict) and t.get("cache_control"))) for t in tools]
    pieces += [(b.get("text", ""), bool(b.get("cache_control"))) for b in _blocks(body.get("system"))]
    user_texts = []
    for message in body["messages"]:
        for block in _blocks(message.get("content")):
            pieces.append((block.get("text", ""), bool(block.get("cache_control"))))
            if message.get("role") == "user":
                user_texts.append(block.get("text", ""))
    last = max((i for i, (_, marked) in enumerate(pieces) if marked), default=-1)
    if body.get("cache_control") and last < 0:
        last = len(pieces) - 1  # automatic caching: up to the last block
    static = "\n".join(text for text, _ in pieces[: last + 1])
    dynamic = "\n".join(text for text, _ in pieces[last + 1 :])
    return {
        "model": body["model"],
        "tool": tool,
        "sql": _sql_of("\n".join(user_texts)),
        "static": static,
        "dynamic": dynamic,
        "cache": last >= 0,
        "max_tokens": body.get("max_tokens", 1024),
    }


def parse_openai(body: dict) -> dict:
    if not body.get("model") or not body.get("messages"):
        raise ApiError(400, "invalid_request_error", "model and messages are required")
    # OpenAI caches the longest previously seen prefix: tools, then the messages up to the
    # last one. Docket sends the stable part first, so the prefix is all but the last message.
    messages = body["messages"]
    system = "\n".join(_text_of(m.get("content")) for m in messages[:-1])
    dynamic = _text_of(messages[-1].get("content"))
    tools = body.get("tools") or []
    response_format = body.get("response_format") or {}
    if tools:
        choice = body.get("tool_choice") or {}
        tool = (choice.get("function") or {}).get("name") or tools[0]["function"]["name"]
        mode = "tool"
    else:
        tool = (response_format.get("json_schema") or {}).get("name", "record_verdict")
        mode = "json_schema" if response_format.get("type") == "json_schema" else "text"
    return {
        "model": body["model"],
        "tool": tool,
        "mode": mode,
        "sql": _sql_of(dynamic),
        "static": json.dumps(tools) + system,
        "dynamic": dynamic,
        # OpenAI caches long prompt prefixes automatically.
        "cache": True,
        "max_tokens": body.get("max_tokens", 1024),
    }


def anthropic_message(request: dict, payload: dict, usage: dict) -> dict:
    return {
        "id": f"msg_sim_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": request["model"],
        "content": [
            {"type": "tool_use", "id": f"toolu_sim_{uuid.uuid4().hex[:16]}", "name": request["tool"], "input": payload}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"],
            "cache_creation_input_tokens": usage["cache_write"],
            "cache_read_input_tokens": usage["cache_read"],
        },
        SIMULATOR_FIELD: True,  # also in a Message Batch result, which has no headers of its own
    }


def openai_completion(request: dict, payload: dict, usage: dict) -> dict:
    arguments = json.dumps(payload)
    if isinstance(payload, dict) and payload.get("decision") == "maybe":
        arguments = arguments[: len(arguments) // 2]  # malformed: truncated JSON
    message = {"role": "assistant", "content": None}
    finish = "stop"
    if request["mode"] == "tool":
        message["tool_calls"] = [
            {
                "id": f"call_sim_{uuid.uuid4().hex[:16]}",
                "type": "function",
                "function": {"name": request["tool"], "arguments": arguments},
            }
        ]
        finish = "tool_calls"
    else:
        message["content"] = arguments
    prompt_tokens = usage["input_tokens"] + usage["cache_read"] + usage["cache_write"]
    return {
        "id": f"chatcmpl-sim-{uuid.uuid4().hex[:20]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": usage["output_tokens"],
            "total_tokens": prompt_tokens + usage["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": usage["cache_read"]},
        },
        "system_fingerprint": "docket-simulator",
        SIMULATOR_FIELD: True,
    }
