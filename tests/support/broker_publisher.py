"""Publish N numbered `record_delivery` tasks through Docket's configured broker.

    python -m tests.support.broker_publisher PUBLISHER COUNT

Run as its own process by the broker stress test (tests/fault/test_broker_stress.py).
"""

import os
import sys

import django

from config.celery import app
from tests.support.broker_tasks import RECORD_DELIVERY


def main(publisher: int, count: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    with app.producer_or_acquire() as producer:
        for sequence in range(count):
            app.send_task(RECORD_DELIVERY, args=(publisher, sequence), producer=producer)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
