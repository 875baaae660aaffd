"""The local vendor simulator: a test double speaking the Anthropic and OpenAI HTTP APIs.

No machine here reaches a vendor, and a fresh user may have no key, so this server answers
`POST /v1/messages` (Anthropic Messages, forced tool use, usage with cache tokens) and
`POST /v1/chat/completions` (OpenAI, tool calls or json_schema, usage) well enough for
the real SDKs, pointed at it by base URL, to work unchanged.

How a simulated model answers is configured per model name (`SimModel`): how often it
catches a wrong query, how often it rejects a correct one, how often a call flips its
usual answer, its latency, and injected faults (429 with retry-after, 529, 500, hangs,
malformed tool output). To know what is true it reads, in order:

1. a marker in the SQL, e.g. `-- sim: wrong join_fanout` or `-- sim: correct fault=500x2`;
2. an oracle (the `simulate_vendor` command looks up Docket's gold labels by SQL
   fingerprint);
3. otherwise it treats the SQL as correct.

Every verdict it produces is simulated; Docket records that on each verdict from the
endpoint it called. Token usage follows the vendors' caching rules (minimum cacheable
length per model family, reads only of entries that existed when the call arrived), so
a simulated cost is what the real API would bill for the same tokens.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from http import HTTPStatus

from labelling.models import ErrorClass

# One list of error classes, shared with labels (labelling.models.ErrorClass).
ERROR_CLASSES = list(ErrorClass.values)
SQL_BLOCK = re.compile(r"<sql[^>]*>\s*(.*?)\s*</sql>", re.S)
MARKER = re.compile(r"sim:\s*([^\n]*)")
FAULT = re.compile(r"^(429|529|500|timeout|malformed)(?:x(\d+))?$")


@dataclass
class SimModel:
    """How one simulated model behaves. Probabilities are per item or per call as named."""

    family: str = "simulated"
    catch_probability: float = 0.6  # per item: rejects a wrong query
    false_reject_probability: float = 0.1  # per item: rejects a correct query
    flip_probability: float = 0.05  # per call: answers the opposite of its usual opinion
    class_accuracy: float = 0.8  # a caught error is named with the right class
    seed: str = ""  # models sharing a seed share blind spots (same family, same misses)
    latency_ms: float = 50.0
    latency_jitter_ms: float = 0.0
    rate_limit_rate: float = 0.0  # per call: 429 with retry-after
    overload_rate: float = 0.0  # per call: 529 (Anthropic) / 503 (OpenAI)
    server_error_rate: float = 0.0  # per call: 500
    timeout_rate: float = 0.0  # per call: hang for hang_s before answering
    malformed_rate: float = 0.0  # per call: a tool call that breaks the schema
    retry_after_s: float = 1.0
    hang_s: float = 5.0
    prompt_overhead_tokens: int = 0
    # Prompt caching as the real vendor does it: a prefix shorter than the model family's
    # minimum is not cached (None: the minimum of the real model the name resembles, see
    # minimum_cacheable_tokens); a cache entry lives cache_ttl_s after its last use.
    cache_min_tokens: int | None = None
    prompt_caching: bool = True
    cache_ttl_s: float = 300.0

    @classmethod
    def from_dict(cls, data: dict) -> SimModel:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown simulated-model settings: {', '.join(sorted(unknown))}")
        return cls(**data)


DEFAULT_MODELS = {
    "sim-claude-judge": SimModel(family="anthropic", catch_probability=0.6, false_reject_probability=0.12, seed="a"),
    "sim-gpt-judge": SimModel(family="openai", catch_probability=0.65, false_reject_probability=0.08, seed="o"),
    # An open-weights server (vLLM, Ollama) reports no cached tokens: nothing is discounted.
    "sim-llama-judge": SimModel(
        family="meta", catch_probability=0.5, false_reject_probability=0.1, seed="m", prompt_caching=False
    ),
    # A generator sampled for self-consistency: it misreads consistently, so it rarely objects.
    "sim-generator": SimModel(
        family="anthropic", catch_probability=0.2, false_reject_probability=0.04, flip_probability=0.1, seed="a"
    ),
}


@dataclass
class Truth:
    wrong: bool = False
    error_class: str = ""
    faults: list = field(default_factory=list)  # [(kind, times or None)]
    join_table: str = ""
    grain_key: str = ""


def parse_marker(sql: str) -> Truth | None:
    """Read `sim:` markers from SQL comments; None when there is none."""
    found = MARKER.findall(sql)
    if not found:
        return None
    truth = Truth()
    for token in " ".join(found).split():
        if token == "correct":
            truth.wrong = False
        elif token == "wrong":
            truth.wrong = True
        elif token in ERROR_CLASSES:
            truth.error_class = token
        elif token.startswith("fault="):
            match = FAULT.match(token.removeprefix("fault="))
            if not match:
                raise ValueError(f"bad simulator fault marker {token!r}")
            truth.faults.append((match.group(1), int(match.group(2)) if match.group(2) else None))
        elif token.startswith("table="):
            truth.join_table = token.removeprefix("table=")
        elif token.startswith("grain="):
            truth.grain_key = token.removeprefix("grain=")
    if truth.wrong and not truth.error_class:
        truth.error_class = "other"
    return truth


def _unit(*parts) -> float:
    """A stable number in [0, 1) from the parts: the model's fixed opinion of an item."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def tokens_of(text: str) -> int:
    return max(1, len(text) // 4)


# Minimum cacheable prompt length per Anthropic model family (Anthropic's prompt-caching
# documentation): first match wins. Sonnet and the Opus 4 / 4.1 models cache from 1,024
# tokens, Haiku 3 / 3.5 from 2,048, Haiku 4.5 and Opus 4.5 / 4.6 from 4,096.
ANTHROPIC_CACHE_MINIMUMS = [
    (re.compile(r"haiku-4[-.]5"), 4096),
    (re.compile(r"opus-4[-.][56]"), 4096),
    (re.compile(r"haiku"), 2048),
    (re.compile(r"sonnet|opus|claude"), 1024),
]
# OpenAI caches prompts of 1,024 tokens or more automatically, in steps of 128 tokens.
OPENAI_CACHE_MINIMUM = 1024
OPENAI_CACHE_STEP = 128


def minimum_cacheable_tokens(model_name: str, model: SimModel, *, anthropic: bool) -> int:
    """Return the shortest prefix the real vendor would cache for this model."""
    if model.cache_min_tokens is not None:
        return model.cache_min_tokens
    if not anthropic:
        return OPENAI_CACHE_MINIMUM
    for pattern, minimum in ANTHROPIC_CACHE_MINIMUMS:
        if pattern.search(model_name.lower()):
            return minimum
    return 1024  # simulated Claude-family models behave like Sonnet


class Simulator:
    """The behaviour, independent of HTTP: decide, fault, count tokens."""

    def __init__(self, models: dict | None = None, default: SimModel | None = None, oracle=None):
        self.models = dict(DEFAULT_MODELS)
        for name, model in (models or {}).items():
            self.models[name] = model if isinstance(model, SimModel) else SimModel.from_dict(model)
        self.default = default or SimModel()
        self.oracle = oracle
        self.rng = random.Random()
        self.lock = threading.Lock()
        self.fault_counts: dict = {}
        # prefix hash -> [time the entry became readable, time of its last use]
        self.cached_prefixes: dict[str, list[float]] = {}
        self.stats: dict = {}
        self.batches: dict[str, SimBatch] = {}

    def batch_create(self, requests: list, *, base_url: str) -> SimBatch:
        batch = SimBatch(
            id=f"msgbatch_sim_{uuid.uuid4().hex[:20]}", base_url=base_url, created=time.time(), total=len(requests)
        )
        with self.lock:
            self.batches[batch.id] = batch
        threading.Thread(target=_batch_process, args=(self, batch, requests), daemon=True).start()
        return batch

    def model(self, name: str) -> SimModel:
        return self.models.get(name, self.default)

    def count(self, key: str) -> None:
        with self.lock:
            self.stats[key] = self.stats.get(key, 0) + 1

    def truth_for(self, sql: str) -> Truth:
        marked = parse_marker(sql)
        if marked is not None:
            return marked
        if self.oracle is not None:
            found = self.oracle(sql)
            if found is not None:
                return found
        return Truth()

    def fault_for(self, model: SimModel, truth: Truth, item_key: str) -> str | None:
        """Pick the fault this call suffers, if any: forced by a marker, else by the rates."""
        for kind, times in truth.faults:
            if times is None:
                return kind
            with self.lock:
                seen = self.fault_counts.get((item_key, kind), 0)
                self.fault_counts[(item_key, kind)] = seen + 1
            if seen < times:
                return kind
        with self.lock:
            draw = self.rng.random()
        for kind, rate in (
            ("429", model.rate_limit_rate),
            ("529", model.overload_rate),
            ("500", model.server_error_rate),
            ("timeout", model.timeout_rate),
            ("malformed", model.malformed_rate),
        ):
            if draw < rate:
                return kind
            draw -= rate
        return None

    def latency_s(self, model: SimModel) -> float:
        """Draw this call's latency in seconds."""
        with self.lock:
            jitter = self.rng.gauss(0, model.latency_jitter_ms) if model.latency_jitter_ms else 0.0
        return max(0.0, model.latency_ms + jitter) / 1000

    def decide(self, model_name: str, model: SimModel, sql: str, truth: Truth) -> dict:
        """Return the verdict this model gives this SQL on this call."""
        opinion = _unit(model.seed or model_name, sql)
        rejects = opinion < (model.catch_probability if truth.wrong else model.false_reject_probability)
        with self.lock:
            if self.rng.random() < model.flip_probability:
                rejects = not rejects
            class_draw = self.rng.random()
            random_class = self.rng.choice(ERROR_CLASSES)
        if not rejects:
            return {"decision": "accept", "reason": "The SQL answers the question as asked.", "error_class": ""}
        error_class = truth.error_class if truth.wrong and class_draw < model.class_accuracy else random_class
        return {
            "decision": "reject",
            "reason": f"Simulated judgement: looks like {error_class.replace('_', ' ')}.",
            "error_class": error_class,
        }

    def hypotheses(self, verdict: dict, sql: str, truth: Truth) -> dict:
        """Turn a verdict into fan-out hypotheses: a rejection becomes a suspected fan-out."""
        if verdict["decision"] != "reject" or verdict["error_class"] != "join_fanout":
            return {"reason": "No fan-out suspected.", "hypotheses": [{"suspected": False}]}
        join_table, grain_key = truth.join_table, truth.grain_key
        if not join_table:
            joined = re.search(r"\bJOIN\s+(\w+)", sql, re.I)
            join_table = joined.group(1) if joined else "unknown"
        if not grain_key:
            first = re.search(r"\bFROM\s+(\w+)(?:\s+(?:AS\s+)?(\w+))?", sql, re.I)
            alias = (first.group(2) or first.group(1)) if first else "t"
            grain_key = f"{alias}.id"
        source = re.search(r"\bFROM\b(.*?)(?:\bGROUP\s+BY\b|\bORDER\s+BY\b|\bLIMIT\b|;|$)", sql, re.S | re.I)
        from_clause = re.sub(r"--[^\n]*", "", source.group(1) if source else " unknown").strip()
        probe = f"SELECT COUNT(*) AS total_rows, COUNT(DISTINCT {grain_key}) AS distinct_keys FROM {from_clause}"
        return {
            "reason": f"{join_table} may repeat rows of {grain_key}.",
            "hypotheses": [{"suspected": True, "join_table": join_table, "grain_key": grain_key, "probe_sql": probe}],
        }

    def answer(self, model_name: str, sql: str, tool_name: str, malformed: bool) -> dict:
        model = self.model(model_name)
        truth = self.truth_for(sql)
        verdict = self.decide(model_name, model, sql, truth)
        payload = self.hypotheses(verdict, sql, truth) if tool_name == "record_hypotheses" else verdict
        if malformed:
            payload = (
                {"decision": "maybe", "reason": 42} if tool_name != "record_hypotheses" else {"hypotheses": "lots"}
            )
        return payload

    def usage(self, request: dict, output: dict, *, anthropic: bool = True, arrived: float | None = None) -> dict:
        """Count tokens as the vendor bills them, with its caching rules.

        A prefix is cached only when the request asks (Anthropic: a cache_control
        breakpoint; OpenAI: always) and it is at least the model family's minimum. A call
        reads the cache only if the entry existed when the call arrived (calls sent
        together all write) and has not expired; otherwise it writes it (Anthropic bills
        the write at 1.25x; OpenAI does not bill writes and reports them as plain input).
        """
        model = self.model(request["model"])
        static_tokens = tokens_of(request["static"]) if request["static"] else 0
        dynamic_tokens = tokens_of(request["dynamic"])
        usage = {
            "input_tokens": dynamic_tokens,
            "output_tokens": tokens_of(json.dumps(output)),
            "cache_read": 0,
            "cache_write": 0,
        }
        minimum = minimum_cacheable_tokens(request["model"], model, anthropic=anthropic)
        cacheable = static_tokens if anthropic else static_tokens - static_tokens % OPENAI_CACHE_STEP
        if not (request["cache"] and model.prompt_caching and static_tokens >= minimum and cacheable):
            usage["input_tokens"] += static_tokens
            self.count("cache:too_short" if request["cache"] and static_tokens < minimum else "cache:off")
            return usage
        usage["input_tokens"] += static_tokens - cacheable
        key = hashlib.sha256((request["model"] + "\x1f" + request["static"]).encode()).hexdigest()
        now = time.monotonic()
        arrived = now if arrived is None else arrived
        with self.lock:
            entry = self.cached_prefixes.get(key)
            readable = entry is not None and entry[0] <= arrived and now - entry[1] <= model.cache_ttl_s
            if readable:
                entry[1] = now
            else:
                self.cached_prefixes[key] = [now, now]
        usage["cache_read" if readable else "cache_write"] = cacheable
        return usage


BATCH_PATH = re.compile(r"^/v1/messages/batches/([\w-]+)(/results)?/?$")


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


@dataclass
class SimBatch:
    id: str
    base_url: str
    created: float
    total: int
    status: str = "in_progress"
    ended: float | None = None
    results: list = field(default_factory=list)

    def public(self) -> dict:
        succeeded = sum(1 for r in self.results if r["result"]["type"] == "succeeded")
        ended = self.status == "ended"
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status,
            "request_counts": {
                "processing": 0 if ended else self.total,
                "succeeded": succeeded,
                "errored": len(self.results) - succeeded,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": _iso(self.created),
            "expires_at": _iso(self.created + 86400),
            "ended_at": _iso(self.ended) if self.ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{self.id}/results" if ended else None,
        }


def _batch_process(simulator, batch: SimBatch, requests: list) -> None:
    """Answer every request of a batch; faults become errored results, never retried."""
    latency = max((simulator.model(r.get("params", {}).get("model", "")).latency_ms for r in requests), default=0)
    time.sleep(latency / 1000)
    for entry in requests:
        custom_id = entry.get("custom_id", "")
        try:
            request = parse_anthropic(entry.get("params") or {})
            model = simulator.model(request["model"])
            truth = simulator.truth_for(request["sql"])
            fault = simulator.fault_for(model, truth, f"{request['model']}|{request['sql']}")
            simulator.count("anthropic:batch_requests")
            raise_fault("500" if fault in ("429", "529", "500", "timeout") else None, model, anthropic=True)
            payload = simulator.answer(
                request["model"], request["sql"], request["tool"], malformed=fault == "malformed"
            )
            usage = simulator.usage(request, payload, anthropic=True)
            result = {"type": "succeeded", "message": anthropic_message(request, payload, usage)}
        except ApiError as exc:
            result = {
                "type": "errored",
                "error": {"type": "error", "error": {"type": exc.kind, "message": exc.message}},
            }
        batch.results.append({"custom_id": custom_id, "result": result})
    batch.status, batch.ended = "ended", time.time()


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers or {}


class SimulatorApp:
    """The HTTP routes, independent of the transport: (method, path, headers, body) -> response."""

    server_version = "DocketVendorSimulator/1.0"

    def __init__(self, simulator: Simulator):
        self.simulator = simulator

    async def respond(self, method: str, target: str, headers: dict, body: bytes) -> tuple[int, dict, bytes]:
        path = target.split("?")[0]
        if method in ("GET", "HEAD"):
            return self.get(path)
        if method != "POST":
            return json_response(405, {"type": "error", "error": {"type": "invalid_request_error", "message": method}})
        try:
            payload = json.loads(body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return json_response(
                400, {"type": "error", "error": {"type": "invalid_request_error", "message": "body is not JSON"}}
            )
        path = path.rstrip("/")
        if path.endswith("/v1/messages/batches"):
            return self.batch_create(payload, host=headers.get("host") or "127.0.0.1")
        if path.endswith("/v1/messages"):
            return await self.answer_api(payload, anthropic=True)
        if path.endswith("/chat/completions"):
            return await self.answer_api(payload, anthropic=False)
        return json_response(404, {"error": {"type": "not_found_error", "message": f"no route {target}"}})

    def get(self, path: str) -> tuple[int, dict, bytes]:
        if path.rstrip("/") in ("", "/health"):
            return json_response(200, {"ok": True, "simulator": True})
        if path.rstrip("/") == "/_sim/stats":
            return json_response(200, dict(self.simulator.stats))
        batch = BATCH_PATH.match(path)
        if batch:
            return self.batch_get(batch.group(1), results=bool(batch.group(2)))
        return json_response(404, {"error": {"type": "not_found_error", "message": path}})

    async def answer_api(self, body: dict, *, anthropic: bool) -> tuple[int, dict, bytes]:
        sim = self.simulator
        vendor = "anthropic" if anthropic else "openai"
        arrived = time.monotonic()
        try:
            request = parse_anthropic(body) if anthropic else parse_openai(body)
            model = sim.model(request["model"])
            if sim.oracle is not None:
                # The oracle reads the database: off the event loop, so other calls go on.
                truth = await asyncio.get_running_loop().run_in_executor(None, sim.truth_for, request["sql"])
            else:
                truth = sim.truth_for(request["sql"])
            fault = sim.fault_for(model, truth, f"{request['model']}|{request['sql']}")
            sim.count(f"{vendor}:requests")
            if fault:
                sim.count(f"{vendor}:fault:{fault}")
            delay = sim.latency_s(model)
            if delay:
                await asyncio.sleep(delay)
            raise_fault(fault, model, anthropic=anthropic)
            if fault == "timeout":
                await asyncio.sleep(model.hang_s)
            payload = sim.answer(request["model"], request["sql"], request["tool"], malformed=fault == "malformed")
            usage = sim.usage(request, payload, anthropic=anthropic, arrived=arrived)
        except ApiError as exc:
            if anthropic:
                error_body = {"type": "error", "error": {"type": exc.kind, "message": exc.message}}
            else:
                error_body = {"error": {"message": exc.message, "type": exc.kind, "code": exc.kind}}
            return json_response(exc.status, error_body, exc.headers)
        sim.count(f"{vendor}:answered")
        if anthropic:
            return json_response(200, anthropic_message(request, payload, usage))
        return json_response(200, openai_completion(request, payload, usage))

    def batch_create(self, body: dict, *, host: str) -> tuple[int, dict, bytes]:
        """Accept a Message Batch; it is processed on a thread and ends after one latency."""
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return json_response(
                400, {"type": "error", "error": {"type": "invalid_request_error", "message": "requests is required"}}
            )
        batch = self.simulator.batch_create(requests, base_url=f"http://{host}")
        return json_response(200, batch.public())

    def batch_get(self, batch_id: str, *, results: bool) -> tuple[int, dict, bytes]:
        batch = self.simulator.batches.get(batch_id)
        if batch is None:
            return json_response(404, {"type": "error", "error": {"type": "not_found_error", "message": batch_id}})
        if not results:
            return json_response(200, batch.public())
        if batch.status != "ended":
            return json_response(
                400, {"type": "error", "error": {"type": "invalid_request_error", "message": "not ended"}}
            )
        data = "".join(json.dumps(line) + "\n" for line in batch.results).encode()
        return 200, {"content-type": "application/binary"}, data


def json_response(status: int, payload: dict, headers: dict | None = None) -> tuple[int, dict, bytes]:
    return status, {"content-type": "application/json", **(headers or {})}, json.dumps(payload).encode()


def raise_fault(fault: str | None, model: SimModel, *, anthropic: bool) -> None:
    if fault == "429":
        raise ApiError(429, "rate_limit_error", "simulated rate limit", {"retry-after": f"{model.retry_after_s:g}"})
    if fault == "529":
        status = 529 if anthropic else 503
        raise ApiError(status, "overloaded_error", "simulated overload", {"retry-after": f"{model.retry_after_s:g}"})
    if fault == "500":
        raise ApiError(500, "api_error", "simulated internal server error")


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
    }


class SimulatorServer:
    """A small asyncio HTTP/1.1 server (keep-alive, one event-loop thread) for SimulatorApp.

    One thread answers every connection and a simulated latency is a timer, not a sleeping
    thread: the vendor's latency is what is simulated, not its CPU, so the double should
    cost the machine (and the worker it shares the cores with) as little as possible.
    `server_address`, `serve_forever()`, `shutdown()` and `server_close()` work as on
    socketserver's servers.
    """

    max_head_bytes = 64 * 1024

    def __init__(self, address: tuple[str, int], app: SimulatorApp):
        self.app = app
        self.socket = socket.create_server(address, backlog=512)
        self.server_address = self.socket.getsockname()[:2]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._stopped = threading.Event()
        self._connections: set = set()
        # Writers of every accepted connection, noted when asyncio accepts it: its task may
        # not have started yet when shutdown comes, and a task cancelled before it starts
        # never reaches the `finally` that closes its connection.
        self._writers: set = set()

    def serve_forever(self) -> None:
        try:
            asyncio.run(self._serve())
        finally:
            self._stopped.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._accepted, sock=self.socket, limit=self.max_head_bytes)
        self._started.set()
        try:
            await self._stop.wait()
        finally:
            # Stop accepting, but close the server only once the connections asyncio has
            # already accepted have their transports: Python 3.11 silently drops (and never
            # closes) a connection whose transport is made after `Server.close()`.
            self._loop.remove_reader(self.socket.fileno())
            for _ in range(3):
                await asyncio.sleep(0)
            server.close()
            # Each round lets connections accepted just before reach `_accepted`, then ends
            # every connection known so far.
            for _ in range(3):
                await asyncio.sleep(0)
                for task in list(self._connections):
                    task.cancel()
                await asyncio.gather(*self._connections, return_exceptions=True)
                # Connections whose task never ran: close them here, and wait until their
                # sockets are really closed (that happens on a later turn of the loop).
                writers, self._writers = list(self._writers), set()
                for writer in writers:
                    writer.close()
                await asyncio.gather(*(writer.wait_closed() for writer in writers), return_exceptions=True)

    def shutdown(self) -> None:
        """Stop serve_forever (from another thread) and wait until it has returned."""
        if not self._started.is_set() or self._stopped.is_set():
            return
        self._loop.call_soon_threadsafe(self._stop.set)
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()

    def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        """Note the connection at once (asyncio calls this as it accepts), then serve it."""
        self._writers.add(writer)
        return self._connection(reader, writer)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        self.app.simulator.count("connections")  # clients should keep theirs alive
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away or sent garbage: drop the connection
        except asyncio.CancelledError:
            pass  # shutdown; ending quietly spares asyncio's "exception in callback" noise
        finally:
            self._connections.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request, answer it; return whether the connection stays open."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # closed between requests
        request_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        else:
            body = await reader.readexactly(int(headers.get("content-length") or 0))
        try:
            status, response_headers, data = await self.app.respond(method, target, headers, body)
        except Exception as exc:  # noqa: BLE001 - a bug in the double answers 500, like a vendor's would
            status, response_headers, data = json_response(
                500, {"type": "error", "error": {"type": "api_error", "message": f"simulator bug: {exc!r}"}}
            )
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        lines = [
            f"HTTP/1.1 {status} {_reason(status)}",
            f"server: {self.app.server_version}",
            f"content-length: {len(data)}",
            "x-docket-simulated: true",
            *(f"{name}: {value}" for name, value in response_headers.items()),
        ]
        if not keep_alive:
            lines.append("connection: close")
        # One write for head and body: no Nagle / delayed-ACK stall between them.
        writer.write("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (b"" if method == "HEAD" else data))
        await writer.drain()
        return keep_alive


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers expected: the final CRLF
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Unknown"


def make_server(host: str = "127.0.0.1", port: int = 0, simulator: Simulator | None = None) -> SimulatorServer:
    """Build (not start) a simulator server; port 0 picks a free port."""
    return SimulatorServer((host, port), SimulatorApp(simulator or Simulator()))


def start_in_thread(simulator: Simulator | None = None, host: str = "127.0.0.1", port: int = 0):
    """Start a simulator on a background thread; return (server, base_url). Call server.shutdown()."""
    server = make_server(host, port, simulator)
    thread = threading.Thread(target=server.serve_forever, name="vendor-simulator", daemon=True)
    thread.start()
    server._started.wait(10)
    return server, f"http://{host}:{server.server_address[1]}"


def load_config(path) -> tuple[dict, SimModel | None]:
    """Read a JSON config: {"models": {name: {...}}, "default": {...}}."""
    with open(path) as handle:
        data = json.load(handle)
    models = {name: SimModel.from_dict(spec) for name, spec in (data.get("models") or {}).items()}
    default = SimModel.from_dict(data["default"]) if data.get("default") else None
    return models, default


def describe(models: dict) -> list[dict]:
    return [{"model": name, **asdict(model)} for name, model in models.items()]
