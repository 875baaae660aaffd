"""What a simulated vendor answers: verdicts, faults, latency and billed tokens.

How a simulated model answers is configured per model name (`SimModel`): how often it
catches a wrong query, how often it rejects a correct one, how often a call flips its
usual answer, its latency, and injected faults (429 with retry-after, 529, 500, hangs,
malformed tool output). To know what is true it reads, in order:

1. a marker in the SQL, e.g. `-- sim: wrong join_fanout` or `-- sim: correct fault=500x2`;
2. an oracle: a callable handed in (Docket's tests hand `judges/simulator_truth.py`
   `gold_label_oracle`), or a truth file (`truth.py`, written by Docket's
   `export_simulator_truth`);
3. otherwise it treats the SQL as correct.

Token usage follows the vendors' caching rules (minimum cacheable length per model
family, reads only of entries that existed when the call arrived), so a simulated cost is
what the real API would bill for the same tokens. Nothing here knows HTTP: `app.py` maps
requests onto this, `server.py` serves it.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, fields

from simulator.conventions import ERROR_CLASSES, OPENAI_CACHE_MINIMUM, OPENAI_CACHE_STEP, anthropic_cache_minimum

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


def truth_of_label(label: dict) -> Truth:
    """Read a label an oracle gives as plain data: {"wrong": bool, "error_class": "a;b"}.

    The first of the label's classes a simulated judge knows is its truth (several are "a;b").
    """
    classes = (label.get("error_class") or "").split(";")
    return Truth(wrong=bool(label.get("wrong")), error_class=next((c for c in classes if c in ERROR_CLASSES), ""))


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
    # Wrong without a class: the simulated model names none, and Docket records its reject as
    # unclassified (it never invents "other").
    return truth


def _unit(*parts) -> float:
    """A stable number in [0, 1) from the parts: the model's fixed opinion of an item."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def tokens_of(text: str) -> int:
    return max(1, len(text) // 4)


def minimum_cacheable_tokens(model_name: str, model: SimModel, *, anthropic: bool) -> int:
    """Return the shortest prefix the real vendor would cache for this model."""
    if model.cache_min_tokens is not None:
        return model.cache_min_tokens
    if not anthropic:
        return OPENAI_CACHE_MINIMUM
    return anthropic_cache_minimum(model_name)  # simulated Claude-family models behave like Sonnet


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
        # Calls per SQL text: a test can ask whether any item was paid for twice.
        self.calls_per_sql: Counter = Counter()
        self.calls_in_flight = 0
        self.batches: dict = {}  # batch id -> batches.SimBatch

    def model(self, name: str) -> SimModel:
        return self.models.get(name, self.default)

    def count(self, key: str) -> None:
        with self.lock:
            self.stats[key] = self.stats.get(key, 0) + 1

    def in_flight(self, change: int) -> None:
        """Count calls being answered; `stats["max_in_flight"]` is the most seen at once."""
        with self.lock:
            self.calls_in_flight += change
            self.stats["max_in_flight"] = max(self.stats.get("max_in_flight", 0), self.calls_in_flight)

    def count_call(self, kind: str, sql: str) -> None:
        """Count one call the vendor would bill (`anthropic:requests`...), in total and for its SQL."""
        with self.lock:
            self.stats[kind] = self.stats.get(kind, 0) + 1
            self.calls_per_sql[sql] += 1

    def truth_for(self, sql: str) -> Truth:
        marked = parse_marker(sql)
        if marked is not None:
            return marked
        if self.oracle is not None:
            found = self.oracle(sql)
            if found is not None:
                return found if isinstance(found, Truth) else truth_of_label(found)
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
        looks_like = f"looks like {error_class.replace('_', ' ')}" if error_class else "looks wrong"
        return {"decision": "reject", "reason": f"Simulated judgement: {looks_like}.", "error_class": error_class}

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


class ApiError(Exception):
    """A vendor's error answer: HTTP status, error type, message and headers."""

    def __init__(self, status: int, kind: str, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers or {}


def raise_fault(fault: str | None, model: SimModel, *, anthropic: bool) -> None:
    """Raise the vendor's error answer for a status fault; a hang or a malformed answer is not one."""
    if fault == "429":
        raise ApiError(429, "rate_limit_error", "simulated rate limit", {"retry-after": f"{model.retry_after_s:g}"})
    if fault == "529":
        status = 529 if anthropic else 503
        raise ApiError(status, "overloaded_error", "simulated overload", {"retry-after": f"{model.retry_after_s:g}"})
    if fault == "500":
        raise ApiError(500, "api_error", "simulated internal server error")


def load_config(path) -> tuple[dict, SimModel | None]:
    """Read a JSON config: {"models": {name: {...}}, "default": {...}}."""
    with open(path) as handle:
        data = json.load(handle)
    models = {name: SimModel.from_dict(spec) for name, spec in (data.get("models") or {}).items()}
    default = SimModel.from_dict(data["default"]) if data.get("default") else None
    return models, default


def describe(models: dict) -> list[dict]:
    """One row per model: its name and settings."""
    return [{"model": name, **asdict(model)} for name, model in models.items()]
