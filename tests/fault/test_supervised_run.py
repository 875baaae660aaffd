"""`make run` keeps the demo up: a worker that dies is restarted and the web never stops.

Runs `bin/run-local` as a fresh user would (SQLite and the filesystem broker, here under a
folder of the test's own, on free ports), kills the Celery worker with SIGKILL, and checks
that the supervisor starts it again, says so, and that the web server answered throughout.
Then Ctrl-C (SIGINT to the whole foreground group, as a terminal sends it) stops everything.
"""

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from tests.support.fixtures import ROOT, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.filesystem_broker]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


class Prober(threading.Thread):
    """Ask for the home page every 0.2 s; keep every answer's status."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url, self.statuses, self.stopping = url, [], threading.Event()

    def run(self):
        while not self.stopping.is_set():
            self.statuses.append(status_of(self.url))
            time.sleep(0.2)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def pid_file_names_another(pid_file, pid: int) -> bool:
    """Say whether the pid file holds a pid other than `pid` (False while it is being rewritten)."""
    try:
        return int(pid_file.read_text()) != pid
    except (OSError, ValueError):
        return False


def test_a_killed_worker_is_restarted_while_the_home_page_keeps_answering(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DOCKET_BROKER_DIR"}}
    env.update(
        DOCKET_VAR_DIR=str(tmp_path),
        PORT=str(port),
        SIMULATOR_PORT=str(free_port()),
        PY=str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else "python",
    )
    env.pop("PYTEST_XDIST_WORKER", None)
    output = tmp_path / "run-local.log"
    with open(output, "w") as log:
        run = subprocess.Popen(
            [str(ROOT / "bin" / "run-local")],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    pid_file = tmp_path / "run-local" / "worker.pid"
    prober = Prober(f"http://127.0.0.1:{port}/")
    try:
        wait_for(lambda: "Demo logins" in output.read_text(), timeout=400, what="make run to start")
        assert "Demo logins" in output.read_text().split("Docket is running at")[1], "the demo logins come last"
        first_worker = int(pid_file.read_text())
        prober.start()
        wait_for(lambda: len(prober.statuses) >= 5, timeout=60, what="the home page to be asked a few times")

        os.killpg(first_worker, signal.SIGKILL)
        wait_for(
            lambda: "restarting it (restart 1" in output.read_text(),
            timeout=60,
            what=f"the supervisor to restart the worker (output: {output.read_text()[-2000:]})",
        )
        # The supervisor says it is restarting before the new worker has written its pid.
        wait_for(lambda: pid_file_names_another(pid_file, first_worker), timeout=60, what="the new worker's pid")
        second_worker = int(pid_file.read_text())
        assert second_worker != first_worker
        time.sleep(5)  # the new worker stays up: it is not dying in a loop
        assert alive(second_worker)
        assert "worker stopped (killed by SIGKILL); restarting it (restart 1" in output.read_text()
        prober.stopping.set()
        prober.join()
        assert prober.statuses and all(status in (200, 302) for status in prober.statuses), prober.statuses

        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C
        # Ten seconds is the promise; the margin is for a loaded machine.
        assert run.wait(timeout=30) in (0, 130, -signal.SIGINT)
        assert not alive(second_worker)
        assert "Docket stopped." in output.read_text()
        assert "Traceback" not in output.read_text()
    finally:
        prober.stopping.set()
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        # The supervised processes have sessions of their own: a failed test ends them too.
        for pid_path in (tmp_path / "run-local").glob("*.pid"):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.killpg(int(pid_path.read_text()), signal.SIGKILL)
