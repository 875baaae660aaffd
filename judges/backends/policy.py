"""How vendor calls are paced and retried (seed 001: a rate limit is not a model problem).

- Each vendor pool has a concurrency limit and optional requests-per-minute and
  tokens-per-minute budgets, shared by every thread in the process.
- 429 and 529 (overloaded) back off, honouring retry-after, pause the whole pool, and
  retry without counting against the attempt budget, up to a patience limit.
- 5xx, timeouts and dropped connections retry a bounded number of times.
- Anything else, or what still fails, becomes an `error` verdict with the reason.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass

from judges.backends.base import (
    MalformedAnswer,
    VerdictResult,
    instructions_for,
    parse_hypotheses_answer,
    parse_verdict,
    token_cost,
)
from judges.backends.cache_minimums import prefix_may_be_cached
from judges.backends.prompt import CacheWarmGate, Prompt, prefix_sha256, prompt_build, request_split
from judges.backends.simulator_marker import answer_is_simulated, answer_trace
from judges.backends.vendors import cached_client

RATE_LIMIT_STATUSES = {429, 529}


class TokenBucket:
    """Refill `rate_per_minute` units per minute; `take(n)` blocks until n are available."""

    def __init__(self, rate_per_minute: float):
        self.capacity = float(rate_per_minute)
        self.per_second = float(rate_per_minute) / 60.0
        self.available = self.capacity
        self.updated = time.monotonic()
        self.lock = threading.Lock()

    def take(self, units: float = 1.0) -> None:
        units = min(units, self.capacity)
        while True:
            with self.lock:
                now = time.monotonic()
                self.available = min(self.capacity, self.available + (now - self.updated) * self.per_second)
                self.updated = now
                if self.available >= units:
                    self.available -= units
                    return
                wait = (units - self.available) / self.per_second
            time.sleep(min(wait, 1.0))


class VendorPool:
    """Capacity of one vendor endpoint in this process: a semaphore plus RPM/TPM buckets."""

    def __init__(self, concurrency: int, rpm: float | None = None, tpm: float | None = None):
        self.concurrency = max(1, int(concurrency))
        self.slots = threading.BoundedSemaphore(self.concurrency)
        self.requests = TokenBucket(rpm) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None
        self.paused_until = 0.0
        self.lock = threading.Lock()

    def pause(self, seconds: float) -> None:
        """Hold every thread of this pool back after a 429, so they do not pile on."""
        with self.lock:
            self.paused_until = max(self.paused_until, time.monotonic() + seconds)

    def wait_until_unpaused(self) -> None:
        while True:
            delay = self.paused_until - time.monotonic()
            if delay <= 0:
                return
            time.sleep(min(delay, 1.0))

    def admit(self, estimated_tokens: int) -> None:
        self.wait_until_unpaused()
        if self.requests:
            self.requests.take(1)
        if self.tokens:
            self.tokens.take(estimated_tokens)


_pools: dict[str, VendorPool] = {}
_pools_lock = threading.Lock()


def vendor_pool(key: str, *, concurrency: int, rpm=None, tpm=None) -> VendorPool:
    """Return the process-wide pool for `key`, creating it on first use."""
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None or pool.concurrency != max(1, int(concurrency)):
            pool = _pools[key] = VendorPool(concurrency, rpm, tpm)
        return pool


@dataclass
class CallPolicy:
    max_retries: int = 3  # for 5xx / timeout / connection errors
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    rate_limit_patience_s: float = 600.0  # total time we wait out 429/529 before giving up

    @classmethod
    def from_config(cls, config: dict) -> CallPolicy:
        return cls(
            max_retries=int(config.get("max_retries", 3)),
            base_delay_s=float(config.get("retry_base_delay_s", 0.5)),
            max_delay_s=float(config.get("retry_max_delay_s", 30.0)),
            rate_limit_patience_s=float(config.get("rate_limit_patience_s", 600.0)),
        )

    def backoff(self, attempt: int) -> float:
        delay = min(self.max_delay_s, self.base_delay_s * (2**attempt))
        return delay * (0.5 + random.random() / 2)


class VendorCallFailed(Exception):
    """A call that failed for good; the message is the reason the error verdict carries.

    `headers` are those of the last answer received (None when none came): they say
    whether the simulator gave it.
    """

    def __init__(self, reason: str, *, attempts: dict, headers=None):
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts
        self.headers = headers


def _answer_headers(exc):
    """The headers of the answer an SDK error carries; None for a timeout or a dropped connection."""
    return getattr(getattr(exc, "response", None), "headers", None)


def retry_after_seconds(exc) -> float | None:
    """Read retry-after-ms / retry-after from an SDK status error's response."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw:
            try:
                return max(0.0, float(raw) * scale)
            except ValueError:
                continue
    return None


def call_with_policy(call, *, pool: VendorPool, policy: CallPolicy, estimated_tokens: int, transient_errors: tuple):
    """Run `call()` under the pool's limits; return (result, attempts) or raise VendorCallFailed.

    `transient_errors` are the SDK's timeout/connection exception classes.
    """
    attempts = {"calls": 0, "rate_limited": 0, "retried": 0, "waited_s": 0.0, "causes": []}
    failures = 0
    rate_limit_started = None
    while True:
        pool.admit(estimated_tokens)
        attempts["calls"] += 1
        with pool.slots:
            try:
                return call(), attempts
            except transient_errors as exc:
                failure, status = exc, None
                reason = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # noqa: BLE001 - classified below, re-raised if unknown
                failure, status = exc, getattr(exc, "status_code", None)
                if status is None:
                    raise
                reason = f"HTTP {status} {type(exc).__name__}: {str(exc)[:300]}"
        if status in RATE_LIMIT_STATUSES:
            # Throttling is the vendor's pacing, not a verdict: wait and retry, uncounted.
            now = time.monotonic()
            rate_limit_started = rate_limit_started or now
            wait = retry_after_seconds(failure) or policy.backoff(attempts["rate_limited"])
            if now - rate_limit_started + wait > policy.rate_limit_patience_s:
                raise VendorCallFailed(
                    f"rate limited for over {policy.rate_limit_patience_s:.0f}s: {reason}",
                    attempts=attempts,
                    headers=_answer_headers(failure),
                )
            attempts["rate_limited"] += 1
            attempts["waited_s"] += wait
            _note_cause(attempts, reason)
            pool.pause(wait)
            continue
        if status is None or status >= 500 or status == 408:
            if failures >= policy.max_retries:
                raise VendorCallFailed(
                    f"gave up after {failures + 1} attempts: {reason}",
                    attempts=attempts,
                    headers=_answer_headers(failure),
                )
            wait = policy.backoff(failures)
            failures += 1
            attempts["retried"] += 1
            attempts["waited_s"] += wait
            _note_cause(attempts, reason)
            time.sleep(wait)
            continue
        raise VendorCallFailed(reason, attempts=attempts, headers=_answer_headers(failure))


# Causes kept per call: a long 429 storm is summarised by its count, not listed in full.
CAUSES_KEPT = 10


def _note_cause(attempts: dict, reason: str) -> None:
    """Remember why a call was retried (the trace shows retries and their causes)."""
    if len(attempts["causes"]) < CAUSES_KEPT:
        attempts["causes"].append(reason[:300])


class VendorBackendMixin:
    """What every vendor-calling backend sets up the same way: policy, timeout, capacity pool.

    The subclass sets `self.endpoint` first and names its pool in `vendor_key()`.
    """

    def setup_vendor_calls(self, *, hypotheses: bool) -> None:
        self.hypotheses = hypotheses
        self.cache_gate = CacheWarmGate()
        self.policy = CallPolicy.from_config(self.config)
        self.timeout_s = float(self.config.get("timeout_s", 60))
        self.pool = vendor_pool(
            self.vendor_key(),
            concurrency=int(self.config.get("concurrency", 8)),
            rpm=self.config.get("rpm"),
            tpm=self.config.get("tpm"),
        )

    def prompt_for(self, query) -> Prompt:
        return prompt_build(
            self.judge_version, query, instructions=instructions_for(self.judge_version, hypotheses=self.hypotheses)
        )

    def trace_fields(self, request: dict, prompt: Prompt) -> dict:
        """The trace a result carries: endpoint, simulation, catalogue, request split for storage.

        Until an answer says otherwise (`mark_answer`), nothing was simulated.
        """
        prefix, tail = request_split(request)
        return {
            **answer_trace(self.endpoint, simulated=False),
            "catalogue_version": prompt.schema.catalogue_version,
            "request_prefix": prefix,
            "prefix_sha256": prefix_sha256(prefix),
            "request_tail": tail,
        }

    def mark_answer(self, trace: dict, context: dict, *, headers=None, body=None) -> None:
        """Record in the trace and context whether the answer carried the simulator's marker."""
        trace.update(answer_trace(self.endpoint, simulated=answer_is_simulated(headers=headers, body=body)))
        context["simulated"] = trace["simulated"]

    def missing_key_result(self, trace: dict, context: dict) -> VerdictResult:
        """A version bound to a real vendor without its key: an error, never the simulator."""
        return VerdictResult.error(f"{self.endpoint.missing_key} is not set", context=context, **trace)

    def cache_minimum_tokens(self) -> int:
        """The shortest prefix the vendor caches for this version's model (see the subclass)."""
        raise NotImplementedError

    # What differs between vendors in one judging call; the subclass names them.
    backend_name = ""  # the context's "backend"
    client_kind = ""  # the SDK client `cached_client` builds

    def send(self, client, request: dict):
        """Send the request through the SDK; return its raw response."""
        raise NotImplementedError

    def transient_errors(self) -> tuple[type[Exception], ...]:
        """The SDK's exceptions worth a retry (the SDK is imported only when a call is made)."""
        raise NotImplementedError

    def judge(self, query) -> VerdictResult:
        prompt = self.prompt_for(query)
        request = self.request(query, prompt)
        trace = self.trace_fields(request, prompt)
        context = {"backend": self.backend_name, "simulated": False, **prompt.context()}
        if self.endpoint.missing_key:
            return self.missing_key_result(trace, context)
        client = cached_client(self.client_kind, self.endpoint, self.timeout_s)
        return self.judge_call(
            trace,
            context,
            lambda: self.send(client, request),
            estimated_tokens=len(prompt.user_text) // 4 + request["max_tokens"],
            transient_errors=self.transient_errors(),
        )

    def judge_call(
        self, trace: dict, context: dict, create, *, estimated_tokens: int, transient_errors
    ) -> VerdictResult:
        """Make one judging call under the policy, through the cache gate, and read its answer into a result.

        `create` returns the SDK's raw response: the verdict is read from the vendor's JSON as
        sent (and stored as such), so the SDK need not build a Message or ChatCompletion only
        for it to be dumped again. The subclass's `result_from` reads that JSON.
        """
        started = time.perf_counter()
        try:
            response, attempts = self.call_through_gate(
                trace,
                lambda: call_with_policy(
                    create,
                    pool=self.pool,
                    policy=self.policy,
                    estimated_tokens=estimated_tokens,
                    transient_errors=transient_errors,
                ),
            )
        except VendorCallFailed as exc:
            context["attempts"] = exc.attempts
            self.mark_answer(trace, context, headers=exc.headers)
            return VerdictResult.error(exc.reason, latency_ms=milliseconds_since(started), context=context, **trace)
        context["attempts"] = attempts
        self.mark_answer(trace, context, headers=response.headers)
        try:
            body = json_body(response)
        except MalformedAnswer as exc:
            return VerdictResult.error(
                f"malformed answer: {exc}", latency_ms=milliseconds_since(started), context=context, **trace
            )
        if not trace["simulated"]:
            self.mark_answer(trace, context, body=body)
        return self.result_from(body, latency_ms=milliseconds_since(started), context=context, trace=trace)

    def verdict_result(
        self, raw: dict, tokens: dict, *, answer, latency_ms: float, context: dict, trace=None, discount=1
    ) -> VerdictResult:
        """A result from a vendor's answer (its JSON): usage and cost always, the verdict if well-formed.

        `answer(raw)` finds the model's payload in the vendor's shape, or raises MalformedAnswer.
        """
        common = {
            **tokens,
            "cost_usd": token_cost(self.judge_version, discount=discount, **tokens),
            "latency_ms": latency_ms,
            "model_reported": raw.get("model") or "",
            "raw_response": raw,
            "context": context,
            **(trace or {}),
        }
        try:
            payload = answer(raw)
            if self.hypotheses:
                found = parse_hypotheses_answer(payload)
                return VerdictResult(
                    decision="accept", reason=found["reason"], hypotheses=found["hypotheses"], **common
                )
            verdict = parse_verdict(payload)
        except MalformedAnswer as exc:
            return VerdictResult.error(f"malformed answer: {exc}", **common)
        return VerdictResult(**verdict, **common)

    def call_through_gate(self, trace: dict, call):
        """Make the call; the first call with a new cacheable prefix goes alone (see CacheWarmGate).

        A prefix below the vendor's minimum is never cached, so nothing is worth waiting for:
        its calls all go at once.
        """
        if not prefix_may_be_cached(trace["request_prefix"], self.cache_minimum_tokens()):
            return call()
        first = self.cache_gate.enter(trace["prefix_sha256"], self.timeout_s)
        try:
            return call()
        finally:
            if first is not None:
                first.set()


def json_body(response) -> dict:
    """The JSON object of an SDK raw response; MalformedAnswer if the body is not one."""
    try:
        body = json.loads(response.http_response.read())
    except ValueError as exc:
        raise MalformedAnswer(f"the response body is not JSON ({exc})") from exc
    if not isinstance(body, dict):
        raise MalformedAnswer("the response body is not a JSON object")
    return body


def milliseconds_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
