"""Fixtures shared by every app's tests."""

import contextlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.cache import caches
from django.db import connection

from config.celery import app as celery_app
from config.roles import ALL_ROLES, ensure_role_groups

ROOT = Path(__file__).resolve().parents[2]


def caches_clear():
    """Empty every configured cache of this process (tokens, warehouses, calibration loads)."""
    for each in caches.all():
        each.clear()


@pytest.fixture(autouse=True)
def _empty_process_cache():
    """Start every test with an empty in-process cache: rows one test cached (tokens,
    warehouses) must not outlive the transaction that rolled them back."""

    caches_clear()


@pytest.fixture
def role_users(db, django_user_model):
    """Return one user per role plus an outsider with no role, keyed by role name."""
    ensure_role_groups()
    users = {}
    for role in ALL_ROLES:
        user = django_user_model.objects.create_user(username=f"{role}-user", password="pw-for-tests")
        user.groups.add(Group.objects.get(name=role))
        users[role] = user
    users["outsider"] = django_user_model.objects.create_user(username="outsider", password="pw-for-tests")
    return users


@pytest.fixture
def client_for(client, role_users):
    """Return a function giving a test client logged in as the given role."""

    def login(role):
        client.force_login(role_users[role])
        return client

    return login


def database_url_for_worker() -> str:
    """Build a DATABASE_URL that points a subprocess at the database the tests use."""
    db = connection.settings_dict
    if "sqlite" in db["ENGINE"]:
        return f"sqlite:///{db['NAME']}"
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgresql://{user}{password}@{host}:{port}/{db['NAME']}"


class WorkerProcess:
    """A real `celery worker` subprocess on the test database and the configured broker.

    Like every worker started without `-Q`, it consumes every queue of CELERY_TASK_QUEUES.
    `command` replaces the whole command line (e.g. `make run`'s own).
    """

    def __init__(self, extra_env=None, concurrency=2, *, app="config", extra_args=(), name="test", command=None):
        self.command = command
        self.extra_env = extra_env or {}
        self.concurrency = concurrency
        self.app = app
        self.extra_args = list(extra_args)
        self.name = name
        self.process = None
        self.log_path = ROOT / "var" / f"test-worker-{uuid.uuid4().hex[:8]}.log"

    def env(self):
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": database_url_for_worker(),
                "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
                "CELERY_TASK_ALWAYS_EAGER": "false",
                "DJANGO_SETTINGS_MODULE": "config.settings",
            }
        )
        if settings.CELERY_BROKER_URL.startswith("filesystem://"):
            env["DOCKET_BROKER_DIR"] = str(settings.BROKER_DIR)
        env.update(self.extra_env)
        return env

    def start(self, purge=True):
        """Start the worker; by default drop messages earlier tests left in a filesystem broker.

        Those messages name rows of databases that no longer exist. `purge=False` keeps
        them, for a restart after a kill that must pick up where the dead worker stopped.
        """
        if purge and self.env()["CELERY_BROKER_URL"].startswith("filesystem://"):
            for message in (Path(self.env()["DOCKET_BROKER_DIR"]) / "in").glob("*"):
                message.unlink(missing_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            self.command or self.default_command(),
            cwd=ROOT,
            env=self.env(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        return self

    def default_command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            self.app,
            "worker",
            "--loglevel=INFO",
            f"--concurrency={self.concurrency}",
            "--pool=prefork",
            "--without-gossip",
            "--without-mingle",
            f"--hostname={self.name}-{uuid.uuid4().hex[:6]}@%h",
            *self.extra_args,
        ]

    def kill(self, sig=9):
        """Kill the worker and its pool children at once, as a crash would."""
        if self.process and self.process.poll() is None:
            # Note the children, kill the parent (so it cannot fork replacements), then them.
            found = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True, check=False)
            self.process.send_signal(sig)
            for child in found.stdout.split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(child), sig)
            self.process.wait(timeout=30)

    def stop(self):
        """Shut down warmly: tasks in flight finish first, so a test can assert on them afterwards.

        Celery takes 2-7 s to do so (its filesystem-broker loop only looks at the shutdown
        flag every 2 s); a fixture whose test is over uses `discard()` instead.
        """
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.close_log()

    def discard(self):
        """Kill a worker whose test is over: nothing is asserted on what it was still doing.

        Once this returns the worker can no longer touch the database, before the test
        database is flushed for the next test (a warm stop gives the same, seconds later).
        """
        self.kill()
        self.close_log()

    def close_log(self):
        if getattr(self, "log", None):
            self.log.close()

    def output(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def wait_until_ready(self, timeout=90.0):
        """Wait for the worker to say it is consuming; fail with its log if it died first."""
        wait_for(
            lambda: " ready." in self.output() or self.process.poll() is not None,
            timeout=timeout,
            what=f"worker {self.name} to start (log: {self.output()[-2000:]})",
        )
        assert self.process.poll() is None, f"worker {self.name} died on start: {self.output()[-3000:]}"
        return self


def wait_for(predicate, timeout=60.0, interval=0.2, what="condition"):
    """Poll until predicate() is truthy; fail with `what` after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")


@pytest.fixture
def celery_worker_process(transactional_db):
    """Start a real Celery worker against the test database; stop it afterwards."""
    worker = WorkerProcess().start()
    yield worker
    worker.discard()


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in the calling process instead of publishing them to a broker.

    The Celery app's own configuration, not Django's setting: once anything has read
    `celery_app.conf`, a changed `CELERY_TASK_ALWAYS_EAGER` setting no longer reaches it (a
    test that set the Django setting passed alone and failed after one that read the conf).
    """
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def synchronous_publish(settings):
    """Publish ingested live queries in the request, after commit, instead of from the
    background publisher (the production path every other test runs): for a test that must
    see the publish, or its failure, when the request returns."""
    settings.TRIAGE_PUBLISH_INTERVAL_MS = 0
