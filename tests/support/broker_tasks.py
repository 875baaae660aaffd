"""A task for broker tests: each delivery appends one line to a file of the worker process.

Workers load it with `--include tests.support.broker_tasks`; DOCKET_DELIVERY_LOG_DIR says
where the files go (one per process, so no two processes write the same file).
"""

import os
from pathlib import Path

from celery import shared_task

RECORD_DELIVERY = "tests.record_delivery"


@shared_task(bind=True, name=RECORD_DELIVERY, acks_late=True)
def record_delivery(self, publisher: int, sequence: int) -> None:
    """Append `publisher sequence` to this process's delivery log, named after its worker."""
    folder = Path(os.environ["DOCKET_DELIVERY_LOG_DIR"])
    worker = self.request.hostname.partition("@")[0]
    with open(folder / f"deliveries-{worker}-{os.getpid()}.log", "a") as log:
        log.write(f"{publisher} {sequence}\n")


def consumers(folder: Path) -> set[str]:
    """The workers (their names before `@`) that recorded a delivery in `folder`."""
    return {log.name.split("-")[1] for log in folder.glob("deliveries-*.log")}


def deliveries(folder: Path) -> list[tuple[int, int]]:
    """Every delivery recorded in `folder`, as (publisher, sequence) pairs, duplicates kept."""
    found = []
    for log in folder.glob("deliveries-*.log"):
        for line in log.read_text().splitlines():
            publisher, sequence = line.split()
            found.append((int(publisher), int(sequence)))
    return found
