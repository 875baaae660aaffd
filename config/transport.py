"""The embedded broker: kombu's filesystem transport, made safe for concurrent readers.

kombu's own writer creates a message file under its final name and only then writes it,
so a reader listing the folder in between takes an empty file and the worker dies with
`Unrecoverable error: JSONDecodeError` (kombu issue #1551). Here a message is written
under a hidden temporary name that no reader looks at and renamed into place when it is
complete (a rename is atomic on POSIX), a reader claims a file by renaming it into the
processed folder on the same filesystem (exactly one reader wins; kombu's reader moves it
across filesystems to /tmp, copying, where two readers can collide), and a file that still
cannot be decoded is logged, set aside and skipped instead of stopping the worker.

Settings select it for `CELERY_BROKER_URL=filesystem://` (`CELERY_BROKER_TRANSPORT`).
"""

import contextlib
import logging
import os
import uuid
from queue import Empty
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)

# Written messages start with this; readers only take names ending in `.<queue>.msg`.
PARTIAL_PREFIX = ".partial-"
# Undecodable messages are renamed to this suffix in the processed folder, for a person.
UNREADABLE_SUFFIX = ".unreadable"


class Channel(filesystem.Channel):
    """A filesystem channel whose messages appear whole or not at all."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._listings: dict[str, list[str]] = {}
        # The folders are made here, by the process that uses them, not by importing settings.
        for folder in (self.data_folder_in, self.data_folder_out, self.processed_folder, self.control_folder):
            os.makedirs(folder, exist_ok=True)

    def _put(self, queue, payload, **kwargs):
        """Write `payload` under a temporary name, then rename it into the queue."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, PARTIAL_PREFIX + name + ".tmp")
        try:
            self._write_partial(partial, str_to_bytes(dumps(payload)))
            os.rename(partial, final)
        except OSError as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def _write_partial(self, path, data: bytes) -> None:
        with open(path, "wb", buffering=0) as f:
            f.write(data)

    def _get(self, queue):
        """Claim the oldest whole message of `queue` by renaming it; skip what cannot be read."""
        suffix = f".{queue}.msg"
        for name in self._candidates(queue, suffix):
            claimed = os.path.join(self.processed_folder, f"{name}.{uuid.uuid4().hex[:8]}.claimed")
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:
                continue  # another reader took it first
            try:
                with open(claimed, "rb") as f:
                    payload = f.read()
            except OSError as exc:
                raise ChannelError(f"Cannot read file {claimed!r} from queue.") from exc
            try:
                message = loads(bytes_to_str(payload))
            except (ValueError, UnicodeDecodeError) as exc:
                kept = claimed.removesuffix(".claimed") + UNREADABLE_SUFFIX
                with contextlib.suppress(FileNotFoundError):
                    os.rename(claimed, kept)
                logger.error("Skipped an unreadable broker message (%s, %d bytes): kept as %s", exc, len(payload), kept)
                continue
            if not self.store_processed:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(claimed)
            return message
        raise Empty()

    def _candidates(self, queue, suffix):
        """Yield this queue's message names, oldest first, from one listing of the folder.

        The names start with the time they were written, so the sorted listing is a FIFO.
        The listing is kept between calls: a worker draining a deep queue lists the folder
        once per batch instead of once per message (with 20,000 files queued, a listing per
        message cost more than the messages themselves).
        """
        pending = self._listings.get(queue)
        if not pending:
            pending = sorted((n for n in os.listdir(self.data_folder_in) if n.endswith(suffix)), reverse=True)
            self._listings[queue] = pending
        while pending:
            yield pending.pop()

    def _size(self, queue):
        suffix = f".{queue}.msg"
        return sum(1 for name in os.listdir(self.data_folder_in) if name.endswith(suffix))

    def _purge(self, queue):
        suffix = f".{queue}.msg"
        count = 0
        for name in os.listdir(self.data_folder_in):
            if name.endswith(suffix):
                try:
                    os.remove(os.path.join(self.data_folder_in, name))
                    count += 1
                except OSError:
                    pass  # taken by a reader meanwhile
        self._listings.pop(queue, None)
        return count


class Transport(filesystem.Transport):
    """kombu's filesystem transport with `Channel` above.

    No default host name: the folder is the address, and kombu otherwise logs
    "No hostname was supplied" each time it describes the connection.
    """

    Channel = Channel
    global_state = filesystem.virtual.BrokerState()
    default_connection_params = {"port": 0}
