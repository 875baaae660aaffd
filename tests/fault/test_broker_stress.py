"""The embedded broker under load: 4 publishers × N messages, 2 consumers, busy CPUs.

One consumer is the real worker with beat, as `make run` starts it; the other a plain
kombu consumer of the same queue through the same transport (tests/support/broker_consumer.py;
a second Celery worker would do too, but at a tenth of the pace, and this test must fit in
CI). Every message is a numbered task that appends its number to a file of the process
that ran it, so lost and duplicated deliveries are counted, not guessed. Two busy-loop
processes keep the cores loaded meanwhile, which widens every race a reader and a writer
of the broker folder could have. `FAULT_BROKER_MESSAGES` sets N (default 5,000 under CI,
1,000 otherwise).
"""

import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.support.broker_tasks import consumers, deliveries
from tests.support.brokers import filesystem_worker_env
from tests.support.fixtures import ROOT, WorkerProcess, wait_for
from tests.support.services import running_in_ci

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.filesystem_broker]

PUBLISHERS = 4
MESSAGES_PER_PUBLISHER = int(os.environ.get("FAULT_BROKER_MESSAGES", "5000" if running_in_ci() else "1000"))
CPU_BURNERS = 2


def burn_cpu():
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def test_four_publishers_and_two_consumers_under_cpu_load_lose_and_duplicate_nothing(transactional_db, tmp_path):
    broker, results = tmp_path / "broker", tmp_path / "deliveries"
    results.mkdir()
    env = filesystem_worker_env(broker, DOCKET_DELIVERY_LOG_DIR=str(results), DOCKET_BROKER_POLL_S="0.01")
    worker = WorkerProcess(
        extra_env=env,
        name="beat",
        extra_args=["--include", "tests.support.broker_tasks", "--beat", "--schedule", str(tmp_path / "beat-schedule")],
    )
    consumer, burners = None, []
    started = time.monotonic()
    try:
        worker.start().wait_until_ready()
        consumer_log = open(tmp_path / "consumer.log", "w")  # noqa: SIM115 - closed below
        consumer = subprocess.Popen(
            [sys.executable, "-m", "tests.support.broker_consumer", "plain"],
            cwd=ROOT,
            env={**worker.env(), **env},
            stdout=consumer_log,
            stderr=subprocess.STDOUT,
        )
        burners = [burn_cpu() for _ in range(CPU_BURNERS)]
        publishers = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.support.broker_publisher", str(p), str(MESSAGES_PER_PUBLISHER)],
                cwd=ROOT,
                env={**worker.env(), **env},
            )
            for p in range(PUBLISHERS)
        ]
        for publisher in publishers:
            assert publisher.wait(timeout=600) == 0, "a publisher failed"
        expected = PUBLISHERS * MESSAGES_PER_PUBLISHER

        def drained():
            crashed = worker.process.poll() is not None or consumer.poll() is not None
            return crashed or len(deliveries(results)) >= expected

        wait_for(drained, timeout=900, interval=1, what="the workers to run every message")
        time.sleep(2)  # a duplicate would arrive after the last original
        wall_s = time.monotonic() - started

        counted = Counter(deliveries(results))
        consumer_output = (tmp_path / "consumer.log").read_text()
        crashes = int(worker.process.poll() is not None or "Unrecoverable error" in worker.output()) + int(
            consumer.poll() is not None
        )
        lost = sum(1 for p in range(PUBLISHERS) for s in range(MESSAGES_PER_PUBLISHER) if (p, s) not in counted)
        duplicated = sum(n - 1 for n in counted.values())
        print(
            f"\nbroker stress: messages={expected} crashes={crashes} lost={lost} duplicated={duplicated} "
            f"wall={wall_s:.1f}s"
        )
        assert (crashes, lost, duplicated) == (0, 0, 0), (worker.output()[-2000:], consumer_output[-2000:])
        assert "Traceback" not in worker.output() + consumer_output, (worker.output()[-3000:], consumer_output)
        assert consumers(results) == {"beat", "plain"}, "both consumers should have taken messages"
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
        if consumer is not None:
            consumer.terminate()
            consumer.wait(timeout=30)
            consumer_log.close()
        worker.discard()
