"""A lean HTTP/1.1 load generator for the ingestion benchmark, run as its own process.

The benchmark machine has two cores shared by gunicorn, PostgreSQL, Redis and this client,
so the client must cost far less per request than the server it measures: http.client in
threads spent about as much CPU per request as the API itself. This one keeps
`clients` keep-alive connections on one asyncio loop, writes pre-formatted requests and
parses only the status line, Content-Length and the JSON body's id.

Usage: python -m tests.bench.loadgen PORT TOKEN SECONDS CLIENTS RATE TAG
RATE is the total posts per second to aim for (0 = as fast as the server answers).
Prints one JSON line: {"latencies_ms": [...], "errors": N, "ids": [...], "posted_at": [...]}.
"""

import asyncio
import json
import sys
import time

MAX_REQUESTS = 200_000


def request_bytes(token: str, external_id: str, wrong: bool) -> bytes:
    body = json.dumps(
        {
            "external_id": external_id,
            "question": "Revenue by month?",
            # One in five is wrong, so the simulated judges flag it into the queue.
            "sql": "SELECT strftime('%Y-%m', created_at) AS m, SUM(amount) FROM orders GROUP BY m"
            + (" -- sim: wrong missing_filter" if wrong else " -- sim: correct"),
            "warehouse": "shop",
            "metadata": {"generator": "bench"},
        }
    ).encode()
    head = (
        "POST /api/v1/queries HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
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


async def client(n: int, args, stop_at: float, interval: float, out: dict) -> None:
    port, token, tag = args["port"], args["token"], args["tag"]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    i = 0
    next_at = time.monotonic()
    while time.monotonic() < stop_at and len(out["latencies_ms"]) < MAX_REQUESTS:
        if interval:
            # Open-loop pacing: a slow answer does not lower the offered rate.
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        payload = request_bytes(token, f"bench-{tag}-{n}-{i}", wrong=i % 5 == 0)
        started = time.perf_counter()
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
        if status == 202:
            out["latencies_ms"].append((time.perf_counter() - started) * 1000)
            out["ids"].append(json.loads(body)["id"])
            out["posted_at"].append(posted_at)
        else:
            out["errors"] += 1
        i += 1
    writer.close()


async def main(args) -> dict:
    out = {"latencies_ms": [], "errors": 0, "ids": [], "posted_at": []}
    clients, rate = args["clients"], args["rate"]
    interval = clients / rate if rate else 0.0
    stop_at = time.monotonic() + args["seconds"]
    await asyncio.gather(*(client(n, args, stop_at, interval, out) for n in range(clients)))
    return out


if __name__ == "__main__":
    port, token, seconds, clients, rate, tag = sys.argv[1:7]
    result = asyncio.run(
        main(
            {
                "port": int(port),
                "token": token,
                "seconds": float(seconds),
                "clients": int(clients),
                "rate": float(rate),
                "tag": tag,
            }
        )
    )
    print(json.dumps(result))
