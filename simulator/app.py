"""The simulator's HTTP routes, independent of the transport: (method, path, headers, body) -> response.

`server.py` (aiohttp) hands each request here; the answers come from `vendor.Simulator`.
A route matches by the end of its path, so a base URL with a prefix of its own
(`http://host/openai` for an OpenAI-compatible server) reaches the same answers.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import re
import time

from simulator import batches
from simulator.formats import (
    anthropic_message,
    json_response,
    openai_completion,
    parse_anthropic,
    parse_openai,
    stamped,
)
from simulator.vendor import ApiError, Simulator, raise_fault

BATCH_PATH = re.compile(r"^/v1/messages/batches/([\w-]+)(/results)?/?$")
# How many of the last calls' keys `GET /_sim/keys` reports.
KEYS_KEPT = 256


def presented_key(headers: dict) -> str:
    """The key a call presented: Anthropic's x-api-key, or OpenAI's bearer token."""
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else bearer)


class SimulatorApp:
    """The HTTP routes, independent of the transport: (method, path, headers, body) -> response."""

    server_version = "DocketVendorSimulator/1.0"

    def __init__(self, simulator: Simulator):
        self.simulator = simulator
        # What each call presented as its key, as a hash (a real key must never reach this
        # port, and if one does it is not kept): tests read it at GET /_sim/keys.
        self.received_keys: collections.deque = collections.deque(maxlen=KEYS_KEPT)

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
        key = presented_key(headers)
        self.received_keys.append({"path": path, "key_sha256": hashlib.sha256(key.encode()).hexdigest()})
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
        if path.rstrip("/") == "/_sim/keys":
            return json_response(200, {"keys": list(self.received_keys)})
        if path.rstrip("/") == "/v1/models":
            return json_response(200, self.models_list())
        batch = BATCH_PATH.match(path)
        if batch:
            return self.batch_get(batch.group(1), results=bool(batch.group(2)))
        return json_response(404, {"error": {"type": "not_found_error", "message": path}})

    def models_list(self) -> dict:
        """The models it serves, as both vendors list theirs (`GET /v1/models`; one page, in name order).

        A name not listed is answered too, with the default behaviour: a judge's form asks this list so a
        simulated judge names a model whose behaviour was set, not a vendor's name the simulator only imitates.
        """
        names = sorted(self.simulator.models)
        data = [
            {"id": name, "type": "model", "object": "model", "display_name": name, "created_at": "2025-01-01T00:00:00Z"}
            for name in names
        ]
        return {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": names[0] if names else None,
            "last_id": names[-1] if names else None,
        }

    async def answer_api(self, body: dict, *, anthropic: bool) -> tuple[int, dict, bytes]:
        """Answer one Messages / Chat Completions call, counted while in flight."""
        sim = self.simulator
        arrived = time.monotonic()
        sim.in_flight(+1)
        try:
            return await self.answer_call(body, anthropic=anthropic, arrived=arrived)
        finally:
            sim.in_flight(-1)

    async def answer_call(self, body: dict, *, anthropic: bool, arrived: float) -> tuple[int, dict, bytes]:
        sim = self.simulator
        vendor = "anthropic" if anthropic else "openai"
        try:
            request = parse_anthropic(body) if anthropic else parse_openai(body)
            model = sim.model(request["model"])
            if sim.oracle is not None:
                # The oracle reads the database: off the event loop, so other calls go on.
                truth = await asyncio.get_running_loop().run_in_executor(None, sim.truth_for, request["sql"])
            else:
                truth = sim.truth_for(request["sql"])
            fault = sim.fault_for(model, truth, f"{request['model']}|{request['sql']}")
            sim.count_call(f"{vendor}:requests", request["sql"])
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
        batch = batches.batch_create(self.simulator, requests, base_url=f"http://{host}")
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
        return 200, stamped({"content-type": "application/binary"}), data
