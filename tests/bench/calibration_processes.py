"""The processes `bench_calibration` measures: the vendor simulator, a Celery worker, their memory.

Memory is read from /proc (Linux): VmRSS now and VmHWM (the peak) of a process and its
pool children.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = ROOT / "var" / "bench"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_simulator(latency_ms: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simulator",
            "--port",
            str(port),
            "--latency-ms",
            str(latency_ms),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers_health(url), 120, "the simulator to listen")  # a busy machine starts it slowly
    except TimeoutError:
        process.kill()  # never leave it behind
        raise
    return process, url


def answers_health(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=1):
            return True
    except OSError:
        return False


def wait_until(predicate, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out waiting for {what}")


def start_worker(simulator_url: str, processes: int = 1) -> subprocess.Popen:
    env = dict(os.environ, VENDOR_SIMULATOR_URL=simulator_url)
    log = open(BENCH_DIR / "worker.log", "w")  # noqa: SIM115 - lives as long as the worker
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--loglevel=WARNING",
            f"--concurrency={processes}",
            "--pool=prefork",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def peak_rss_mb(pid: int) -> float:
    """Return the largest VmHWM (peak RSS) among a process and its children, in MB."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    peak = 0
    for one in pids:
        try:
            for line in Path(f"/proc/{one}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except FileNotFoundError:
            continue
    return peak / 1024


def worker_pids(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [pid, *(int(p) for p in children.read_text().split())] if children.exists() else [pid]


def status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def own_peak_rss_mb() -> float:
    """Return this process's own peak resident memory (VmHWM), in MB.

    Not `getrusage(RUSAGE_SELF).ru_maxrss`: Linux carries a process's maximum across exec, so
    a phase started by a large parent (run_all after other benchmarks: 330 MB) reports the
    parent's size as its own peak, which hid a 100k report's 140 MB and flattened the drift
    monitor's 10k-vs-1M ratio to 1.0. VmHWM belongs to the address space exec created.
    """
    return status_kb(os.getpid(), "VmHWM") / 1024


def rss_mb(pid: int) -> float:
    """Return the largest current resident set (VmRSS) among a process and its children, in MB."""
    return max(status_kb(one, "VmRSS") for one in worker_pids(pid)) / 1024
