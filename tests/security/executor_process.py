"""The hostile-corpus harness's side of `tests.security.executor`: start it, send it SQL, read answers.

The SQL runs in its own process so that its peak resident memory is measured on the
process that ran it: the executor reports its own high-water mark, and `run` samples from
here the executor's process tree (a SQLite query runs in a child of it) and the warehouse's
PostgreSQL backends while the call runs.
"""

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.security.watches import MemorySampler
from tests.support.fixtures import database_url_for_worker

ROOT = Path(__file__).resolve().parents[2]
# The statement timeout every warehouse statement of the harness runs under.
TIMEOUT_S = 1.0


class Executor:
    """`tests.security.executor` in its own process, on the test database and given DSNs."""

    ANSWER_WAIT_S = 120

    def __init__(self, tmp_path: Path, extra_env: dict, database: str | None = None):
        self.database = database  # the PostgreSQL warehouse's database, whose backends are sampled
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": database_url_for_worker(),
                "DJANGO_SETTINGS_MODULE": "config.settings",
                # Settings write nothing: a process in a fresh var folder needs the key given.
                "SECRET_KEY": settings.SECRET_KEY,
                "WAREHOUSES_FILE": str(settings.WAREHOUSES_FILE),
                "WAREHOUSE_STATEMENT_TIMEOUT_S": str(TIMEOUT_S),
                "CELERY_TASK_ALWAYS_EAGER": "true",
                "TRIAGE_PUBLISH_INTERVAL_MS": "0",
                "DOCKET_VAR_DIR": str(tmp_path / "executor-var"),
            }
        )
        env.update(extra_env)
        self.log = (tmp_path / "executor.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.security.executor"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )

    def run(self, request: dict) -> dict:
        """Send one request; return its answer with the memory the call took, measured from here."""
        with MemorySampler(self.process.pid, self.database) as sampled:
            answer = self._ask(request)
        answer["tree_peak_mb"] = round(sampled.tree_mb, 1)
        answer["backend_peak_mb"] = round(sampled.backend_mb, 1)
        return answer

    def _ask(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], self.ANSWER_WAIT_S)
        if not ready:
            self.close()
            pytest.fail(f"the executor gave no answer in {self.ANSWER_WAIT_S}s for {request['entry']}")
        line = self.process.stdout.readline()
        if not line:
            self.close()
            pytest.fail(f"the executor died on {request['entry']}: see {self.log.name}")
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
