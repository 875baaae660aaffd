"""Docket's Celery app on kombu's own filesystem transport, to show what it does.

`celery -A tests.support.stock_filesystem_app worker` is the real worker with only the
transport swapped back to kombu's, whose reader can take a half-written message file.
"""

from config.celery import app

app.conf.update(broker_transport="kombu.transport.filesystem:Transport")

__all__ = ["app"]
