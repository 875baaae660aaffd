"""Every Celery task goes to its app's queue, and the worker `make run` starts consumes them all.

The queues are set in one place (CELERY_TASK_ROUTES and CELERY_TASK_QUEUES in settings),
with the per-xdist-worker suffix the default queue has, so parallel test runs stay apart.
"""

import queue
import re
import shlex
import sys
from pathlib import Path

import pytest
from django.conf import settings

from config.celery import app
from tests.support.fixtures import ROOT, WorkerProcess, wait_for

# One harmless task per queue: each finds nothing to do on an empty test database.
ONE_TASK_PER_QUEUE = {
    "config.ping": {"token": "queues"},
    "probes.refresh_catalogue": {"refresh_id": -1},
    "labelling.query_fingerprint_fill": {"gold_set_id": -1},
    "judges.requeue_stale_chunks": {},
    "triage.requeue_pending": {},
}


def expected_queue(task_name: str) -> str:
    return settings.APP_QUEUES.get(task_name.partition(".")[0], settings.CELERY_TASK_DEFAULT_QUEUE)


def routed_queue(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


def task_ids_on(queue_name: str, wait_s: float = 1.0) -> set[str]:
    """Take every message off a queue of the test run's broker; return their task ids."""
    taken = set()
    with app.connection_for_write() as connection:
        simple = connection.SimpleQueue(queue_name)
        try:
            while True:
                message = simple.get(block=True, timeout=wait_s)
                taken.add(message.headers["id"])
                message.ack()
        except queue.Empty:
            pass
        finally:
            simple.close()
    return taken


def make_run_worker_command(var_dir: Path) -> list[str]:
    """Return the worker command of `bin/run-local` (what `make run` starts), its variables filled in.

    Logged at INFO instead of run-local's WARNING, so that each finished task shows.
    """
    script = (ROOT / "bin" / "run-local").read_text()
    found = re.search(r'^\s*"worker=(.*)" \\$', script, re.MULTILINE)
    assert found, "bin/run-local no longer starts a process called worker"
    command = found.group(1).replace('\\"', '"')
    for variable, value in {"$PY": sys.executable, "${LOG_LEVEL}": "INFO", "$VAR_DIR": str(var_dir)}.items():
        command = command.replace(variable, value)
    assert "$" not in command, f"a variable of run-local's worker command is not filled in: {command}"
    return shlex.split(command)


def test_every_task_is_routed_to_the_queue_of_the_app_it_belongs_to():
    app.loader.import_default_modules()  # every app's tasks.py, as a worker loads them
    project_tasks = [name for name in app.tasks if not name.startswith("celery.")]
    apps_with_tasks = set()
    for name in project_tasks:
        prefix = name.partition(".")[0]
        assert app.tasks[name].__module__.partition(".")[0] == prefix, f"{name} is named after another app"
        assert routed_queue(name) == expected_queue(name), name
        apps_with_tasks.add(prefix)
    assert {"probes", "labelling", "judges", "triage"} <= apps_with_tasks


def test_the_queues_carry_the_test_runs_suffix_like_the_default_queue():
    suffix = f"-{settings.XDIST_WORKER}" if settings.XDIST_WORKER else ""
    assert f"celery{suffix}" == settings.CELERY_TASK_DEFAULT_QUEUE
    assert set(settings.APP_QUEUES.values()) == {
        f"{name}{suffix}" for name in ("probes", "labelling", "judges", "triage")
    }
    assert set(settings.CELERY_TASK_QUEUES) == {settings.CELERY_TASK_DEFAULT_QUEUE, *settings.APP_QUEUES.values()}


def test_a_task_of_each_app_lands_on_that_apps_queue_of_the_broker():
    for name, kwargs in ONE_TASK_PER_QUEUE.items():
        task_ids_on(expected_queue(name), wait_s=0.05)  # what earlier tests left
        task_id = app.send_task(name, kwargs=kwargs).id
        assert task_id in task_ids_on(expected_queue(name)), f"{name} is not on {expected_queue(name)}"
    assert {expected_queue(name) for name in ONE_TASK_PER_QUEUE} == set(settings.CELERY_TASK_QUEUES)


@pytest.mark.worker
@pytest.mark.slow
def test_the_worker_make_run_starts_runs_a_task_from_every_queue(transactional_db, tmp_path):
    worker = WorkerProcess(command=make_run_worker_command(tmp_path), name="make-run")
    worker.start().wait_until_ready()
    try:
        sent = {name: app.send_task(name, kwargs=kwargs).id for name, kwargs in ONE_TASK_PER_QUEUE.items()}
        for name, task_id in sent.items():
            wait_for(
                lambda name=name, task_id=task_id: f"Task {name}[{task_id}] succeeded" in worker.output(),
                timeout=120,
                what=f"the worker to run {name} from {expected_queue(name)} (log: {worker.output()[-2000:]})",
            )
    finally:
        worker.discard()
