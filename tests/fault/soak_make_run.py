"""Post a live query every few seconds to a running `make run`, then check every one was decided.

    python tests/fault/soak_make_run.py --base-url http://127.0.0.1:8000 --token TOKEN --minutes 30

The soak behind issue 14's "make run stays up": run it against a fresh clone's `make run`
(get a token with `manage.py issue_api_token soak --scope ingest --scope read`), compare
var/run-local/worker.pid before and after, and read the console for tracebacks. It prints
one JSON line: posted, decided, undecided, failed posts and the statuses seen.
"""

import argparse
import json
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter

DECIDED = {"flagged", "passed", "unjudged"}
SQLS = [
    "SELECT region, SUM(amount) FROM orders GROUP BY region",
    "SELECT c.name, COUNT(*) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.name",
    "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'",
]


def call(url: str, token: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--interval-s", type=float, default=2)
    parser.add_argument("--settle-s", type=float, default=180, help="how long to wait for the last decisions")
    args = parser.parse_args()

    posted, failed = [], 0
    end = time.monotonic() + args.minutes * 60
    while time.monotonic() < end:
        started = time.monotonic()
        body = {
            "external_id": f"soak-{uuid.uuid4().hex}",
            "question": "How much did each region sell?",
            "sql": SQLS[len(posted) % len(SQLS)],
            "warehouse": "demo",
        }
        try:
            posted.append(call(f"{args.base_url}/api/v1/queries", args.token, body)["status_url"])
        except (urllib.error.URLError, OSError, KeyError) as exc:
            failed += 1
            print(f"post failed: {exc}", flush=True)
        time.sleep(max(0.0, args.interval_s - (time.monotonic() - started)))

    statuses: dict[str, str] = {}
    deadline = time.monotonic() + args.settle_s
    while time.monotonic() < deadline:
        for url in posted:
            if statuses.get(url) not in DECIDED:
                try:
                    statuses[url] = call(url, args.token)["status"]
                except (urllib.error.URLError, OSError, KeyError) as exc:
                    statuses[url] = f"error: {exc}"
        if all(status in DECIDED for status in statuses.values()):
            break
        time.sleep(5)
    decided = sum(1 for status in statuses.values() if status in DECIDED)
    summary = {
        "posted": len(posted),
        "decided": decided,
        "undecided": len(posted) - decided,
        "failed_posts": failed,
        "statuses": dict(Counter(statuses.values())),
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
