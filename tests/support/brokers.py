"""Brokers for tests: another broker URL for an outage, and the filesystem broker's write window."""

import contextlib
import os
import time
import uuid
from pathlib import Path
from time import monotonic

from kombu import pools
from kombu.transport import filesystem as kombu_filesystem
from kombu.transport.filesystem import LOCK_EX, lock, unlock
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

from config import transport as docket_transport
from config.celery import app

# Nothing listens on port 1: every publish fails at once with "connection refused".
CLOSED_PORT_BROKER = "redis://127.0.0.1:1/0"


def reset_publisher_pools() -> None:
    """Drop pooled connections and producers so the next publish connects afresh."""
    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@contextlib.contextmanager
def broker_at(url):
    """Point this process's Celery publisher at another broker URL, then restore it."""
    previous, previous_env = app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")
    previous_transport = app.conf.broker_transport
    # Celery reads CELERY_BROKER_URL from the environment before its own setting.
    os.environ["CELERY_BROKER_URL"] = app.conf.broker_url = url
    # A transport class named in settings (the filesystem broker's) would override the URL's.
    app.conf.broker_transport = None
    reset_publisher_pools()
    try:
        yield
    finally:
        app.conf.broker_url = previous
        app.conf.broker_transport = previous_transport
        if previous_env is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = previous_env
        reset_publisher_pools()


# --- The filesystem broker's write window (kombu issue #1551) ------------------------------
# A writer that pauses between creating a message file and writing it, so a reader polling
# the folder meets the window every time instead of once in a few thousand messages.
WRITE_WINDOW_S = 3.0


class StockSlowWriterChannel(kombu_filesystem.Channel):
    """kombu's own writer (`Channel._put`), paused between its `open` and its `write`."""

    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        with open(os.path.join(self.data_folder_out, name), "wb", buffering=0) as f:
            lock(f, LOCK_EX)
            time.sleep(WRITE_WINDOW_S)
            f.write(str_to_bytes(dumps(payload)))
            unlock(f)


class StockSlowWriterTransport(kombu_filesystem.Transport):
    Channel = StockSlowWriterChannel


class DocketSlowWriterChannel(docket_transport.Channel):
    """Docket's writer (`config.transport.Channel`), paused between its `open` and its `write`."""

    def _write_partial(self, path, data):
        with open(path, "wb", buffering=0) as f:
            time.sleep(WRITE_WINDOW_S)
            f.write(data)


class DocketSlowWriterTransport(docket_transport.Transport):
    Channel = DocketSlowWriterChannel


def filesystem_broker_options(folder: Path) -> dict:
    """Transport options for a filesystem broker in `folder`, as settings build them."""
    return {
        "data_folder_in": str(folder / "in"),
        "data_folder_out": str(folder / "in"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


def filesystem_worker_env(folder: Path, **extra) -> dict:
    """Environment for a worker or publisher process on the filesystem broker in `folder`."""
    return {
        "CELERY_BROKER_URL": "filesystem://",
        "DOCKET_BROKER_DIR": str(folder),
        "DOCKET_BROKER_POLL_S": "0.05",
        **extra,
    }


def send_through(transport: str, folder: Path, task_name: str, *args) -> None:
    """Publish one Celery task message to `folder` through the given transport class."""
    with app.connection_for_write(
        "filesystem://", transport=transport, transport_options=filesystem_broker_options(folder)
    ) as conn:
        app.send_task(task_name, args=args, connection=conn, queue=app.conf.task_default_queue)
