"""What both clients share: the options, the counters, the rows, and how one batch is delivered.

Delivery is written once, as a generator that yields what to do next (`Post` a body, `Sleep`
before a retry) and is sent each post's `HttpResult`; the thread client runs it with blocking
calls, the asyncio client with awaits. It decides, per answer of Docket's ingestion API:
- 200/202: sent;
- 429, 500, 502, 503, 504 or no answer (connection refused, reset, timed out): retried after
  `Retry-After` if the server gave one, else an exponential backoff with jitter, up to
  `max_retries` times; then the batch is given up (`failed`);
- 400 naming bad items: those are `rejected`, the rest resent at once;
- 413: the batch is halved and each half sent;
- anything else (401, 403, 404...): the batch is given up, the reason logged.
Re-sending is safe: Docket stores a query once per external id.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

logger = logging.getLogger("docket_client")

MAX_BATCH = 500  # what one post to /api/v1/queries may carry
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 300.0


@dataclass(frozen=True)
class Options:
    """How a client batches and retries; checked when the client is made (the only time it raises)."""

    batch_size: int = 100
    flush_interval: float = 1.0
    max_queue_size: int = 10_000
    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    timeout: float = 10.0

    def __post_init__(self):
        if not 1 <= self.batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}, not {self.batch_size}")
        if self.max_queue_size < self.batch_size:
            raise ValueError("max_queue_size must hold at least one batch")
        for name in ("flush_interval", "backoff_base", "backoff_max", "timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must not be negative")


@dataclass
class ClientStats:
    """Counters of queries: queued, sent, dropped (queue full or client closed), rejected (by the
    server, as invalid), failed (given up after retries, or refused: bad token, wrong URL), and
    retries (posts repeated). `last_error` says what went wrong last."""

    queued: int = 0
    sent: int = 0
    dropped: int = 0
    rejected: int = 0
    failed: int = 0
    retries: int = 0
    last_error: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, name: str, count: int = 1, error: str = "") -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + count)
            if error:
                self.last_error = error

    def __getitem__(self, name: str):
        """Read a counter by name too: `stats["sent"]` is `stats.sent`."""
        return self.as_dict()[name]

    def as_dict(self) -> dict:
        with self._lock:
            return {name: getattr(self, name) for name in self.__dataclass_fields__ if not name.startswith("_")}


def encoded_row(*, question, sql, warehouse, external_id=None, attempts=None, dialect=None, metadata=None) -> bytes:
    """Return one query as the JSON the ingestion API takes; an id is made if none is given."""
    row = {
        "external_id": str(external_id) if external_id is not None else uuid.uuid4().hex,
        "question": question,
        "sql": sql,
        "warehouse": warehouse,
    }
    optional = {"dialect": dialect, "metadata": metadata, "attempts": list(attempts) if attempts else None}
    row.update({key: value for key, value in optional.items() if value is not None})
    return json.dumps(row, ensure_ascii=False).encode()


def queue_row(admit, fields: dict, stats: ClientStats) -> bool:
    """Encode one query and hand it to `admit`, the client's own queueing; never raise to the caller.

    A query that cannot be encoded is counted as rejected; whatever `admit` raises is counted as
    dropped: nothing may reach the caller's request path.
    """
    try:
        row = encoded_row(**fields)
    except (TypeError, ValueError) as error:
        stats.add("rejected", error=f"cannot encode the query: {error}")
        logger.error("docket_client: query not queued, it cannot be encoded as JSON: %s", error)
        return False
    try:
        return admit(row)
    except Exception as error:  # noqa: BLE001 - nothing may reach the caller's request path
        stats.add("dropped", error=str(error))
        logger.exception("docket_client: query not queued")
        return False


def admitted(queue, row: bytes, *, closing: bool, options: Options, stats: ClientStats) -> bool:
    """Append a row to a client's queue unless the client is closing or the queue is full (counted and logged)."""
    if closing or len(queue) >= options.max_queue_size:
        reason = "the client is closed" if closing else "the queue is full"
        stats.add("dropped", error=f"query dropped: {reason}")
        logger.warning("docket_client: query dropped, %s (%d waiting)", reason, len(queue))
        return False
    queue.append((time.monotonic(), row))
    stats.add("queued")
    return True


def batch_body(rows: list[bytes]) -> bytes:
    return b"[" + b",".join(rows) + b"]"


@dataclass(frozen=True)
class HttpResult:
    status: int | None  # None: no answer (connection refused, reset, timed out)
    headers: dict
    body: bytes = b""
    error: str = ""


@dataclass(frozen=True)
class Post:
    rows: list[bytes]

    @property
    def body(self) -> bytes:
        return batch_body(self.rows)


@dataclass(frozen=True)
class Sleep:
    seconds: float


def retry_after_seconds(headers: dict) -> float | None:
    """Read a Retry-After header: delay seconds or an HTTP date."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def backoff_seconds(options: Options, retry: int) -> float:
    """Exponential backoff with jitter (half to all of the step), capped at backoff_max."""
    return min(options.backoff_max, options.backoff_base * 2 ** (retry - 1)) * random.uniform(0.5, 1.0)


def bad_item_indexes(body: bytes, size: int) -> set[int]:
    """Return the items a 400 answer names as invalid (the API's `errors.items` keys)."""
    try:
        items = json.loads(body)["errors"]["items"]
        return {int(key) for key in items if 0 <= int(key) < size}
    except (ValueError, KeyError, TypeError):
        return set()


def _describe(result: HttpResult) -> str:
    if result.status is None:
        return result.error or "no answer"
    return f"HTTP {result.status}: {result.body[:300].decode(errors='replace')}"


def delivery(rows: list[bytes], *, options: Options, stats: ClientStats):
    """Deliver one batch; yields Post and Sleep, is sent an HttpResult after each Post."""
    parts, retries = [rows], 0
    while parts:
        part = parts.pop(0)
        result = yield Post(part)
        reason = _describe(result)
        if result.status in (200, 201, 202):
            stats.add("sent", len(part))
        elif result.status is None or result.status in RETRY_STATUSES:
            retries += 1
            if retries > options.max_retries:
                stats.add("failed", len(part), error=reason)
                logger.error(
                    "docket_client: gave up on %d queries after %d retries: %s", len(part), retries - 1, reason
                )
                continue
            delay = retry_after_seconds(result.headers) if result.status else None
            delay = backoff_seconds(options, retries) if delay is None else delay
            stats.add("retries", error=reason)
            logger.warning("docket_client: %s; retrying %d queries in %.2fs", reason, len(part), delay)
            yield Sleep(delay)
            parts.insert(0, part)
        elif result.status == 413 and len(part) > 1:
            half = len(part) // 2
            parts[:0] = [part[:half], part[half:]]
        elif result.status == 400 and 0 < len(bad := bad_item_indexes(result.body, len(part))) < len(part):
            stats.add("rejected", len(bad), error=reason)
            logger.error("docket_client: the server rejected %d queries as invalid: %s", len(bad), reason)
            parts.insert(0, [row for index, row in enumerate(part) if index not in bad])
        else:
            counter = "rejected" if result.status in (400, 413) else "failed"
            stats.add(counter, len(part), error=reason)
            logger.error("docket_client: %d queries not accepted: %s", len(part), reason)
