"""A lean HTTP/1.1 load generator for the ingestion benchmark, run as its own process.

The benchmark machine has two cores shared by gunicorn, PostgreSQL, Redis and this client,
so the client must cost far less per request than the server it measures: http.client in
threads spent about as much CPU per request as the API itself. This one keeps
`clients` keep-alive connections on one asyncio loop, writes pre-formatted requests and
parses only the status line, Content-Length and the JSON body's id.

Pacing is open loop, as wrk2 and vegeta do it: the connections take turns at evenly
spaced moments, so RATE posts a second arrive spread over the second rather than in
bursts of CLIENTS; a post sent late (its connection was still waiting for an answer) is
timed from when it was due, so a slow server shows its queue in the latencies instead of
hiding it (coordinated omission).

Usage: python -m tests.bench.loadgen PORT TOKEN SECONDS CLIENTS RATE TAG QUERIES_JSONL WAREHOUSE [GET_PATH|MODE]
RATE is the total posts per second to aim for (0 = as fast as the server answers);
QUERIES_JSONL is a gold-set file whose SQL is posted in turn (labelling/data/demo_gold.jsonl).
With GET_PATH (it starts with "/") it GETs that path instead (a 200 counts), the baseline of
what the same server answers for a bare JSON endpoint. MODE `batch:N` posts lists of N
queries to the same API; `otlp:N` posts the same queries as N spans an export to /v1/traces
(`otlp-proto:N`: the same exports as protobuf)
(OTLP/JSON, one root span per query carrying `db.query.text`, `db.namespace` and
`docket.question`).
Prints one JSON line: {"latencies_ms": [...], "errors": N, "ids": [...], "posted_at": [...],
"queries": N} (ids only for single posts; `queries` counts the queries every answered post carried).
"""

import asyncio
import base64
import hashlib
import json
import sys
import time

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

MAX_REQUESTS = 200_000


def live_queries(path: str) -> list[dict]:
    """The demo gold set's questions and SQL, each marked for the simulated judges.

    Real SQL against the demo warehouse, so the pipeline's verifier and fan-out probes do
    real work; the markers let the simulator reject exactly the wrong ones.
    """
    queries = []
    with open(path) as lines:
        for line in lines:
            item = json.loads(line)
            marker = f"wrong {item['error_class'] or 'other'}" if item["label"] == "wrong" else "correct"
            queries.append({"question": item["question"], "sql": f"{item['sql']}\n-- sim: {marker}"})
    return queries


def request_bytes(token: str, external_id: str, query: dict, warehouse: str) -> bytes:
    body = json.dumps(
        {
            "external_id": external_id,
            "question": query["question"],
            "sql": query["sql"],
            "warehouse": warehouse,
            "metadata": {"generator": "bench"},
        }
    ).encode()
    head = (
        "POST /api/v1/queries HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def batch_request_bytes(token: str, tag: str, queries: list[dict], warehouse: str) -> bytes:
    body = json.dumps(
        [
            {
                "external_id": f"{tag}-{k}",
                "question": query["question"],
                "sql": query["sql"],
                "warehouse": warehouse,
                "metadata": {"generator": "bench"},
            }
            for k, query in enumerate(queries)
        ]
    ).encode()
    return _post(token, "/api/v1/queries", body)


def otlp_export(tag: str, queries: list[dict], warehouse: str) -> dict:
    """An OTLP/JSON export of one root span per query (ids from the tag, so every export is new)."""
    trace = hashlib.sha256(tag.encode()).hexdigest()[:32]
    now = time.time_ns()
    spans = [
        {
            "traceId": trace,
            "spanId": hashlib.sha256(f"{tag}-{k}".encode()).hexdigest()[:16],
            "name": "SELECT demo",
            "kind": 3,
            "startTimeUnixNano": str(now),
            "endTimeUnixNano": str(now + 1_000_000),
            "attributes": [
                {"key": "db.system.name", "value": {"stringValue": "sqlite"}},
                {"key": "db.namespace", "value": {"stringValue": warehouse}},
                {"key": "db.query.text", "value": {"stringValue": query["sql"]}},
                {"key": "docket.question", "value": {"stringValue": query["question"]}},
            ],
        }
        for k, query in enumerate(queries)
    ]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]},
                "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}],
            }
        ]
    }


def otlp_request_bytes(token: str, tag: str, queries: list[dict], warehouse: str) -> bytes:
    """The export as OTLP/JSON."""
    return _post(token, "/v1/traces", json.dumps(otlp_export(tag, queries, warehouse)).encode())


def otlp_proto_request_bytes(token: str, tag: str, queries: list[dict], warehouse: str) -> bytes:
    """The same export as protobuf, the encoding OTLP/HTTP exporters send by default."""
    export = otlp_export(tag, queries, warehouse)
    for span in export["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["traceId"] = base64.b64encode(bytes.fromhex(span["traceId"])).decode()  # protobuf's JSON form
        span["spanId"] = base64.b64encode(bytes.fromhex(span["spanId"])).decode()
    message = json_format.ParseDict(export, ExportTraceServiceRequest())
    return _post(token, "/v1/traces", message.SerializeToString(), "application/x-protobuf")


def _post(token: str, path: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return status, await reader.readexactly(length)


async def client(n: int, args, start_at: float, stop_at: float, interval: float, out: dict) -> None:
    port, token, tag = args["port"], args["token"], args["tag"]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    i = 0
    # The connections take turns, evenly spaced (as wrk2 and vegeta pace a constant rate):
    # started together they would fire in lockstep, a burst of `clients` posts at once.
    next_at = start_at + n * interval / args["clients"]
    while time.monotonic() < stop_at and len(out["latencies_ms"]) < MAX_REQUESTS:
        if interval:
            # Open-loop pacing: a slow answer does not lower the offered rate.
            delay = next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        if args["get_path"]:
            payload = f"GET {args['get_path']} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        elif args["batch"]:
            size, start = args["batch"], (n * 7919 + i * args["batch"]) % len(args["queries"])
            chosen = [args["queries"][(start + k) % len(args["queries"])] for k in range(size)]
            build = {"otlp": otlp_request_bytes, "otlp-proto": otlp_proto_request_bytes}.get(
                args["otlp"], batch_request_bytes
            )
            payload = build(token, f"bench-{tag}-{n}-{i}", chosen, args["warehouse"])
        else:
            query = args["queries"][(n * 7919 + i) % len(args["queries"])]
            payload = request_bytes(token, f"bench-{tag}-{n}-{i}", query, args["warehouse"])
        # A post that leaves late because this connection's previous answer was slow is
        # timed from when it was due, so a slow server cannot hide its queue (coordinated omission).
        started = min(time.monotonic(), next_at) if interval else time.monotonic()
        next_at += interval
        posted_at = time.time()
        try:
            writer.write(payload)
            status, body = await read_response(reader)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            out["errors"] += 1
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            i += 1
            continue
        if (args["get_path"] or args["otlp"]) and status == 200:
            out["latencies_ms"].append((time.monotonic() - started) * 1000)
            out["queries"] += args["batch"] if args["otlp"] else 0
        elif args["batch"] and status == 202:
            out["latencies_ms"].append((time.monotonic() - started) * 1000)
            out["queries"] += args["batch"]
        elif status == 202 and body.startswith(b"{"):  # an answer without its body is an error
            out["latencies_ms"].append((time.monotonic() - started) * 1000)
            out["ids"].append(json.loads(body)["id"])
            out["posted_at"].append(posted_at)
            out["queries"] += 1
        else:
            out["errors"] += 1
        i += 1
    writer.close()


async def main(args) -> dict:
    out = {"latencies_ms": [], "errors": 0, "ids": [], "posted_at": [], "queries": 0}
    clients, rate = args["clients"], args["rate"]
    interval = clients / rate if rate else 0.0
    start_at = time.monotonic() + 0.2  # time to open the connections
    stop_at = start_at + args["seconds"]
    await asyncio.gather(*(client(n, args, start_at, stop_at, interval, out) for n in range(clients)))
    return out


if __name__ == "__main__":
    port, token, seconds, clients, rate, tag, queries, warehouse = sys.argv[1:9]
    extra = sys.argv[9] if len(sys.argv) > 9 else ""
    get_path = extra if extra.startswith("/") else ""
    mode, _, size = extra.partition(":")
    result = asyncio.run(
        main(
            {
                "port": int(port),
                "token": token,
                "seconds": float(seconds),
                "clients": int(clients),
                "rate": float(rate),
                "tag": tag,
                "queries": live_queries(queries),
                "warehouse": warehouse,
                "get_path": get_path,
                "batch": int(size) if mode in ("batch", "otlp", "otlp-proto") else 0,
                "otlp": mode if mode.startswith("otlp") else "",
            }
        )
    )
    print(json.dumps(result))
