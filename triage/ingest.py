"""Ingestion of live queries: idempotent on (client, external id), published after commit.

Queries are created by the labelling app's own constructor (`labelling.services.queries_create`),
so a live query is stored as any other query is; its fingerprint is left to the pipeline's
worker, off the API's hot path.
"""

import itertools
import logging
import random
import time
from dataclasses import dataclass

from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from labelling.models import QuerySource
from labelling.services import queries_create
from probes.models import Warehouse
from triage import ingest_sharing, ingest_sql
from triage.models import ApiToken, LiveQuery
from triage.publishing import live_queries_publish_soon

logger = logging.getLogger(__name__)

# A post racing another for the same external ids retries this often (each retry finds
# more of them stored); a post PostgreSQL picks as a deadlock victim, this often.
INGEST_RACE_RETRIES = 3
INGEST_DEADLOCK_RETRIES = 5


@dataclass(frozen=True)
class IngestedQuery:
    # The stored live row: a `LiveQuery`, or from the one-statement path an `ingest_sql.StoredLiveQuery`.
    # Read only its pk, external_id, client and status.
    live: LiveQuery | ingest_sql.StoredLiveQuery
    created: bool


def _insert_new(rows: list[dict], token: ApiToken | None, warehouses: dict) -> list[LiveQuery]:
    """Insert fresh rows as queries and their live rows, marked as sent to the broker now.

    The live rows go in in the order given (external-id order): two posts of the same ids
    then wait for each other on the unique index instead of deadlocking.
    """
    if not rows:
        return []
    queries = queries_create(
        queries=[
            {
                "question": row["question"],
                "sql": row["sql"],
                "external_id": row["external_id"],
                "dialect": row.get("dialect"),
                "warehouse": warehouses[row["warehouse"]],
                "metadata": row.get("metadata"),
            }
            for row in rows
        ],
        source=QuerySource.LIVE,
        fingerprint=False,
    )
    client = token.client if token else ""
    # enqueued_at records the publish attempt made right after commit; a failed publish
    # clears it, and the sweeper re-sends anything still pending after a while either way.
    now = timezone.now()
    lives = [
        LiveQuery(
            query=q, external_id=q.external_id, api_token=token, client=client, enqueued_at=now, enqueue_attempts=1
        )
        for q in queries
    ]
    return LiveQuery.objects.bulk_create(lives)


def _ingest_one_statement(rows: list[dict], token: ApiToken | None, warehouses: dict) -> tuple[dict, set]:
    """Insert the new rows with one statement, then read the repeats' stored rows; return (live by id, new ids).

    PostgreSQL outside a transaction only. The statement skips an external id the client has
    stored (ON CONFLICT), so a post of new ids costs one round trip and a post with repeats two;
    concurrent posts of this process share their statement (`triage/ingest_sharing.py`).
    """
    client = token.client if token else ""
    by_external: dict = {}
    fresh: set[str] = set()
    wanted = rows
    for attempt in itertools.count():
        lives = ingest_sharing.live_rows_store(rows=wanted, warehouses=warehouses, token=token)
        if lives:  # one statement outside a transaction: committed when it returns
            live_queries_publish_soon(ids=[live.pk for live in lives])
        by_external.update({live.external_id: live for live in lives})
        fresh.update(live.external_id for live in lives)
        missing = [row["external_id"] for row in wanted if row["external_id"] not in by_external]
        if missing:
            by_external.update(
                {live.external_id: live for live in LiveQuery.objects.filter(client=client, external_id__in=missing)}
            )
        wanted = [row for row in wanted if row["external_id"] not in by_external]
        if not wanted:
            return by_external, fresh
        # A stored row that went away between the statement and the read: insert it again.
        if attempt == INGEST_RACE_RETRIES:
            raise IntegrityError(f"ingestion: {len(wanted)} external ids neither stored nor insertable")


def _ingest_all_new(rows: list[dict], token: ApiToken | None, warehouses: dict) -> dict[str, LiveQuery] | None:
    """Insert rows assuming none was posted before; None if one was (`_ingest_careful` decides).

    Nearly every post is new, so this saves the look-up the careful path starts with; the
    unique constraint on (client, external id), not this function, guarantees no duplicate.
    """
    try:
        with transaction.atomic():
            lives = _insert_new(rows, token, warehouses)
            transaction.on_commit(lambda ids=[live.pk for live in lives]: live_queries_publish_soon(ids=ids))
    except IntegrityError:
        return None
    return {live.external_id: live for live in lives}


def _ingest_careful(rows: list[dict], token: ApiToken | None, warehouses: dict) -> tuple[dict, set]:
    """Find the client's stored rows and insert the rest; return (live by external id, new ids)."""
    client = token.client if token else ""
    for attempt in itertools.count():
        try:
            with transaction.atomic():
                stored = LiveQuery.objects.select_related("query").filter(
                    client=client, external_id__in=[row["external_id"] for row in rows]
                )
                by_external = {live.external_id: live for live in stored}
                new_lives = _insert_new([r for r in rows if r["external_id"] not in by_external], token, warehouses)
                by_external.update({live.external_id: live for live in new_lives})
                fresh_ids = [live.pk for live in new_lives]
                if fresh_ids:
                    transaction.on_commit(lambda ids=fresh_ids: live_queries_publish_soon(ids=ids))
            return by_external, {live.external_id for live in new_lives}
        except IntegrityError:
            # A concurrent post of the same external id won the race; the retry finds it.
            if attempt == INGEST_RACE_RETRIES:
                raise


def _is_deadlock(exc: OperationalError) -> bool:
    """Say whether PostgreSQL chose this transaction as a deadlock victim (or could not serialise it)."""
    return getattr(exc.__cause__, "sqlstate", None) in ("40P01", "40001")


def live_queries_ingest(*, rows: list[dict], token: ApiToken | None = None, warehouses=None) -> list[IngestedQuery]:
    """Store validated rows as live queries, idempotently on (client, external_id); enqueue after commit.

    Re-posting an external id returns the stored query, never a second one; so does a
    repeat inside one list (only its first occurrence reports `created`). Another client's
    query with the same external id is not this client's: it gets its own. Rows are
    inserted in external-id order and a deadlock is retried, so concurrent posts of the
    same ids in any order all succeed. Rows must already be validated (warehouse names
    exist; pass the Warehouse rows by name if the caller has them). Publishing to the
    broker happens after the commit; if it fails, the rows stay `pending` for the sweeper.
    """
    if warehouses is None:
        warehouses = {w.name: w for w in Warehouse.objects.filter(name__in={r["warehouse"] for r in rows})}
    first_of = {}
    for row in rows:
        first_of.setdefault(row["external_id"], row)  # a repeat inside the list is the same query
    ordered = [first_of[external_id] for external_id in sorted(first_of)]
    for attempt in range(INGEST_DEADLOCK_RETRIES + 1):
        try:
            if ingest_sql.usable() and not connection.in_atomic_block:
                by_external, fresh = _ingest_one_statement(ordered, token, warehouses)
                break
            by_external = _ingest_all_new(ordered, token, warehouses)
            fresh = set(by_external or ())
            if by_external is None:
                by_external, fresh = _ingest_careful(ordered, token, warehouses)
            break
        except OperationalError as exc:
            if not _is_deadlock(exc) or attempt == INGEST_DEADLOCK_RETRIES:
                raise
            logger.warning("triage: ingestion lost a deadlock (attempt %d); retrying", attempt + 1)
            time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
    ingested = []
    for row in rows:
        external_id = row["external_id"]
        ingested.append(IngestedQuery(live=by_external[external_id], created=external_id in fresh))
        fresh.discard(external_id)  # reported once; a repeat later in the list says created=False
    return ingested
