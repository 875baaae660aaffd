"""Benchmark: the ingestion API under load (gunicorn + PostgreSQL + Redis + a Celery worker).

Measures single-query POST throughput and latency (p50/p99), the time from POST to the
pipeline's decision (p50), and whether the web and worker processes' memory stays flat.
Scale with BENCH_TRIAGE_SECONDS (default 20; the issue's soak is 120) and
BENCH_TRIAGE_CLIENTS (default 16). Needs PostgreSQL at BENCH_POSTGRES_URL (default
postgresql://postgres@127.0.0.1:5432) and Redis at BENCH_REDIS_URL (default db 6).

Every request goes to 127.0.0.1 only; the load loop is bounded in time and count.
"""

import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
DB_NAME = "triage_bench"
PORT = int(os.environ.get("BENCH_TRIAGE_PORT", "8791"))
MAX_REQUESTS = 200_000

JUDGE_LATENCY_MS = 200
SIMULATOR_PORT = int(os.environ.get("BENCH_TRIAGE_SIMULATOR_PORT", "8792"))
SETUP = """
import sys
from probes.models import Warehouse
from triage.services import api_token_issue, policy_publish
Warehouse.objects.get_or_create(name="shop", defaults={"dialect": "sqlite"})
judges = []
if "--judges" in sys.argv:
    from judges.models import Judge, JudgeVersion
    for name in ("bench-judge-a", "bench-judge-b"):
        judge = Judge.objects.create(name=name)
        judges.append(JudgeVersion.objects.create(
            judge=judge, number=1, backend="anthropic", family="simulated", model="sim-bench",
            config={"simulated": True, "timeout_s": 5.0, "concurrency": 8}, is_simulated=True,
        ))
policy_publish(changes={"run_verifier": False, "run_fanout_detector": False, "audit_share": 0.05},
               judge_versions=judges)
print(api_token_issue(client="bench", scopes=["ingest", "read"])[1])
"""


def _start_simulator(env: dict):
    """Serve the judges' vendor simulator (200 ms, always right) in its own process, if it exists."""
    import importlib.util
    import socket
    import tempfile

    if importlib.util.find_spec("judges.management.commands.simulate_vendor") is None:
        return None, None
    config = Path(tempfile.mkdtemp()) / "sim.json"
    model = {"family": "simulated", "catch_probability": 1.0, "false_reject_probability": 0.0, "flip_probability": 0.0}
    config.write_text(json.dumps({"models": {"sim-bench": model}}))
    port = SIMULATOR_PORT
    process = subprocess.Popen(
        [PY, "manage.py", "simulate_vendor", "--port", str(port), "--config", str(config), "--no-oracle"]
        + ["--latency-ms", str(JUDGE_LATENCY_MS)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the vendor simulator did not start")


def _env(pg_base: str, redis_url: str) -> dict:
    env = dict(os.environ)
    env.update(
        {
            # Persistent connections, as production runs it: a new PostgreSQL connection per
            # request would dominate the API's latency.
            "DATABASE_URL": f"{pg_base}/{DB_NAME}?conn_max_age=60",
            "CELERY_BROKER_URL": redis_url,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


def _rss_kb(pid: int) -> int:
    """Resident memory of a process and its children, in KiB (Linux /proc)."""
    total = 0
    pids = [pid]
    try:
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def _wait_for_health(deadline_s: float = 60) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=2)
            conn.request("GET", "/health/")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("gunicorn did not become healthy")


def _load(token: str, seconds: float, clients: int) -> tuple[list[float], int, list[int]]:
    """Post single queries from `clients` keep-alive connections for `seconds`."""
    latencies: list[float] = []
    errors = [0]
    ids: list[int] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    run_tag = uuid.uuid4().hex[:8]

    def worker(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        i = 0
        while time.monotonic() < stop_at and len(latencies) < MAX_REQUESTS:
            body = json.dumps(
                {
                    "external_id": f"bench-{run_tag}-{n}-{i}",
                    "question": "Revenue by month?",
                    # One in five is wrong, so the simulated judges flag it into the queue.
                    "sql": "SELECT strftime('%Y-%m', created_at) AS m, SUM(amount) FROM orders GROUP BY m"
                    + (" -- sim: wrong missing_filter" if i % 5 == 0 else " -- sim: correct"),
                    "warehouse": "shop",
                    "metadata": {"generator": "bench"},
                }
            )
            started = time.perf_counter()
            try:
                conn.request("POST", "/api/v1/queries", body=body, headers=headers)
                response = conn.getresponse()
                payload = response.read()
                ok = response.status == 202
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
                ok, payload = False, b""
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                if ok:
                    latencies.append(elapsed)
                    ids.append(json.loads(payload)["id"])
                else:
                    errors[0] += 1
            i += 1
        conn.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0], ids


def _pipeline_delays_ms(env: dict, ids: list[int]) -> tuple[list[float], list[float]]:
    """Time from POST to the pipeline's decision, and to the item being in the queue (flagged ones)."""
    sample = ids[:: max(1, len(ids) // 1000)]
    code = (
        "import json;from triage.models import LiveQuery, TriageItem;"
        f"ids={sample!r};"
        "done=LiveQuery.objects.filter(pk__in=ids, finished_at__isnull=False).values_list('created_at','finished_at');"
        "queued=TriageItem.objects.filter(query_id__in=ids).values_list('query__live__created_at','created_at');"
        "ms=lambda pairs: [(b-a).total_seconds()*1000 for a,b in pairs];"
        "print(json.dumps([ms(done), ms(queued)]))"
    )
    out = subprocess.run(
        [PY, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    decided, queued = json.loads(out.stdout.strip().splitlines()[-1])
    return decided, queued


def _growth(values: list[int]) -> float:
    """Median memory of the last quarter of the run over that of the first quarter."""
    quarter = max(1, len(values) // 4)
    return statistics.median(values[-quarter:]) / statistics.median(values[:quarter])


def _purge_queue(env: dict) -> None:
    """Drop tasks the worker did not reach, so a later test worker on this broker is not flooded."""
    subprocess.run(
        [PY, "-m", "celery", "-A", "config", "purge", "-f"], cwd=ROOT, env=env, capture_output=True, check=False
    )


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run() -> list[dict]:
    seconds = float(os.environ.get("BENCH_TRIAGE_SECONDS", "20"))
    clients = int(os.environ.get("BENCH_TRIAGE_CLIENTS", "16"))
    pg_base = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432")
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6")
    env = _env(pg_base, redis_url)
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DB_NAME], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", DB_NAME], check=True)
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    _purge_queue(env)
    simulator, simulator_url = _start_simulator(env)
    if simulator_url:
        env["VENDOR_SIMULATOR_URL"] = simulator_url
    setup = SETUP.replace('"--judges" in sys.argv', "True" if simulator else "False")
    token = (
        subprocess.run(
            [PY, "manage.py", "shell", "-c", setup], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    web = subprocess.Popen(
        [PY, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{PORT}", "-w", "3", "-k", "gthread", "--threads", "4"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [
            PY,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--loglevel=WARNING",
            "--pool=threads",
            "--concurrency=16",
            "--without-gossip",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_health()
        _load(token, min(10.0, seconds / 4), clients)  # warm-up: imports, connections, caches
        samples: list[tuple[int, int]] = []
        sampling = threading.Event()

        def sample_memory():
            while not sampling.wait(1.0):
                samples.append((_rss_kb(web.pid), _rss_kb(worker.pid)))

        sampler = threading.Thread(target=sample_memory)
        sampler.start()
        started = time.monotonic()
        latencies, errors, ids = _load(token, seconds, clients)
        elapsed = time.monotonic() - started
        sampling.set()
        sampler.join()
        # Let the worker drain what was just posted (bounded): a backlog shows up as delay.
        drain_until = time.monotonic() + 60
        decided, queued = _pipeline_delays_ms(env, ids)
        while len(decided) < len(ids[:: max(1, len(ids) // 1000)]) and time.monotonic() < drain_until:
            time.sleep(5)
            decided, queued = _pipeline_delays_ms(env, ids)
    finally:
        for process in (web, worker):
            process.terminate()
        for process in (web, worker):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        _purge_queue(env)
        if simulator is not None:
            simulator.terminate()
            simulator.wait(timeout=20)
    return [
        {
            "name": "triage_api_posts_per_second",
            "value": len(latencies) / elapsed,
            "unit": "req/s",
            "target_op": ">=",
            "target": 300,
        },
        {
            "name": "triage_api_p50_ms",
            "value": statistics.median(latencies),
            "unit": "ms",
            "target_op": "<=",
            "target": 50,
        },
        {
            "name": "triage_api_p99_ms",
            "value": _percentile(latencies, 0.99),
            "unit": "ms",
            "target_op": "<=",
            "target": 100,
        },
        {"name": "triage_api_errors", "value": errors, "unit": "requests", "target_op": "<=", "target": 0},
        {
            "name": "triage_post_to_queue_p50_ms",
            "value": statistics.median(queued) if queued else float("nan"),
            "unit": "ms",
            "target_op": "<=",
            "target": (JUDGE_LATENCY_MS if simulator else 0) + 150,
        },
        {
            "name": "triage_post_to_decision_p50_ms",
            "value": statistics.median(decided) if decided else float("nan"),
            "unit": "ms",
            "target_op": "<=",
            "target": (JUDGE_LATENCY_MS if simulator else 0) + 150,
        },
        {
            "name": "triage_web_memory_growth_ratio",
            "value": _growth([w for w, _ in samples]),
            "unit": "ratio",
            "target_op": "<=",
            "target": 1.10,
        },
        {
            "name": "triage_worker_memory_growth_ratio",
            "value": _growth([k for _, k in samples]),
            "unit": "ratio",
            "target_op": "<=",
            "target": 1.10,
        },
    ]


if __name__ == "__main__":
    for row in run():
        print(f"{row['name']:40s} {row['value']:10.2f} {row['unit']:8s} (target {row['target_op']} {row['target']})")
