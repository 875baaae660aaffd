"""Anthropic Message Batches as the simulator answers them: accepted at once, ended after one latency."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field

from simulator.conventions import SIMULATOR_FIELD
from simulator.formats import anthropic_message, parse_anthropic
from simulator.vendor import ApiError, Simulator, raise_fault


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
            simulator.count_call("anthropic:batch_requests", request["sql"])
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
        batch.results.append({"custom_id": custom_id, "result": result, SIMULATOR_FIELD: True})
    batch.status, batch.ended = "ended", time.time()


def batch_create(simulator: Simulator, requests: list, *, base_url: str) -> SimBatch:
    """Register a batch on the simulator and answer it on a thread of its own."""
    batch = SimBatch(
        id=f"msgbatch_sim_{uuid.uuid4().hex[:20]}", base_url=base_url, created=time.time(), total=len(requests)
    )
    with simulator.lock:
        simulator.batches[batch.id] = batch
    threading.Thread(target=_batch_process, args=(simulator, batch, requests), daemon=True).start()
    return batch
