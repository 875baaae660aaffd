"""The stack `bench_triage` measures: a fresh PostgreSQL database, gunicorn, a Celery worker, the simulator.

Every process listens on 127.0.0.1 only; the worker, like every worker started without
`-Q`, consumes all of Docket's queues, and `purge_queues` empties all of them.
"""

import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
DB_NAME = os.environ.get("BENCH_TRIAGE_DB", "triage_bench")

PORT = int(os.environ.get("BENCH_TRIAGE_PORT", "8791"))

JUDGE_LATENCY_MS = 200

SIMULATOR_PORT = int(os.environ.get("BENCH_TRIAGE_SIMULATOR_PORT", "8792"))

SETUP = """
import sys
from probes.models import Warehouse
from triage.policy import policy_publish
from triage.tokens import api_token_issue
judges = []
if "--judges" in sys.argv:
    from judges.models import Judge, JudgeVersion
    for name in ("bench-judge-a", "bench-judge-b"):
        judge = Judge.objects.create(name=name)
        judges.append(JudgeVersion.objects.create(
            judge=judge, number=1, backend="anthropic", family="simulated", model="sim-bench",
            config={"simulated": True, "timeout_s": 5.0, "concurrency": 8}, is_simulated=True,
        ))
# The whole pipeline: verifier, judges, the fan-out detector and its probes on the demo warehouse.
policy_publish(changes={"run_verifier": True, "run_fanout_detector": True, "audit_share": 0.05},
               judge_versions=judges)
print(api_token_issue(client="bench", scopes=["ingest", "read"])[1])
"""


def start_simulator(env: dict):
    """Serve the vendor simulator (200 ms, always right) in its own process, if it exists."""

    if importlib.util.find_spec("simulator") is None:
        return None, None
    config = Path(tempfile.mkdtemp()) / "sim.json"
    model = {"family": "simulated", "catch_probability": 1.0, "false_reject_probability": 0.0, "flip_probability": 0.0}
    config.write_text(json.dumps({"models": {"sim-bench": model}}))
    port = SIMULATOR_PORT
    process = subprocess.Popen(
        [PY, "-m", "simulator", "--port", str(port), "--config", str(config)] + ["--latency-ms", str(JUDGE_LATENCY_MS)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # 60 s: a loaded 2-core host starts processes slowly.
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the vendor simulator did not start")


def bench_env(pg_base: str, redis_url: str) -> dict:
    env = dict(os.environ)
    env.update(
        {
            # Persistent connections, as the settings keep them by default.
            "DATABASE_URL": f"{pg_base}/{DB_NAME}",
            "CELERY_BROKER_URL": redis_url,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


def wait_for_health(deadline_s: float = 60) -> None:
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


def purge_queues(env: dict) -> None:
    """Drop tasks no worker took, so a later worker on this broker is not flooded."""
    subprocess.run(
        [PY, "-m", "celery", "-A", "config", "purge", "-f"], cwd=ROOT, env=env, capture_output=True, check=False
    )


def stack_prepare(env: dict, pg_base: str) -> tuple[str, subprocess.Popen | None]:
    """A fresh database, the simulator and an API token; return the token and the simulator."""
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DB_NAME], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", DB_NAME], check=True)
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    # The demo warehouse in a scratch folder: the benchmark never touches the demo's own files.
    scratch = Path(tempfile.mkdtemp(prefix="bench-triage-"))
    env["WAREHOUSES_FILE"] = str(scratch / "warehouses.json")
    manage = [PY, "manage.py"]
    subprocess.run(
        manage + ["load_demo_warehouse", "--path", str(scratch / "demo.sqlite3")],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run(manage + ["refresh_catalogue", "demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    purge_queues(env)
    simulator, simulator_url = start_simulator(env)
    if simulator_url:
        env["VENDOR_SIMULATOR_URL"] = simulator_url
    setup = SETUP.replace('"--judges" in sys.argv', "True" if simulator else "False")
    out = subprocess.run(
        [PY, "manage.py", "shell", "-c", setup], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip().splitlines()[-1], simulator


def start_web(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [PY, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi", "-b", f"127.0.0.1:{PORT}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def start_worker(env: dict) -> subprocess.Popen:
    # Processes, not threads, run the pipeline's tasks: its thirty-odd database round trips
    # each wait for the GIL behind the other tasks' CPU work, which doubled a task's time
    # under sixteen threads. Each process still calls its query's judges in parallel.
    pool = os.environ.get("BENCH_TRIAGE_WORKER_POOL", "prefork")
    concurrency = os.environ.get("BENCH_TRIAGE_WORKER_CONCURRENCY", "8")
    command = [PY, "-m", "celery", "-A", "config", "worker", "--loglevel=WARNING", f"--pool={pool}"]
    command += [f"--concurrency={concurrency}", "--without-gossip", "--without-mingle"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(*processes) -> None:
    for process in processes:
        if process is not None:
            process.terminate()
    for process in processes:
        if process is None:
            continue
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
