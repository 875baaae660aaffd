"""A plain kombu consumer of Docket's task queue, recording `record_delivery` messages.

    python -m tests.support.broker_consumer NAME

The broker stress test's second consumer: it takes messages from the same folder as the
real worker through the same transport (Docket's configured broker), decodes each
`record_delivery` message (others go back to the queue, for the worker), appends
`publisher sequence` to DOCKET_DELIVERY_LOG_DIR/deliveries-NAME-PID.log and acknowledges.
It runs until it is terminated.
"""

import os
import signal
import sys
import time
from pathlib import Path

import django

from config.celery import app
from tests.support.broker_tasks import RECORD_DELIVERY


def main(name: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    log_path = Path(os.environ["DOCKET_DELIVERY_LOG_DIR"]) / f"deliveries-{name}-{os.getpid()}.log"
    with app.connection_for_read() as conn, open(log_path, "a", buffering=1) as log:
        queue = conn.SimpleQueue(app.amqp.queues[app.conf.task_default_queue])
        while not stopping:
            try:
                message = queue.get(timeout=0.5)
            except queue.Empty:
                continue
            if message.headers.get("task") != RECORD_DELIVERY:
                message.requeue()  # a real task (beat's): the worker runs those
                time.sleep(0.05)
                continue
            args, _kwargs, _embed = message.decode()
            log.write(f"{args[0]} {args[1]}\n")
            message.ack()
        queue.close()


if __name__ == "__main__":
    main(sys.argv[1])
