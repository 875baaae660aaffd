"""The ingestion API's one hand-built statement: a post's queries and live rows in one round trip.

On PostgreSQL a fresh post's `labelling_query` rows and their `triage_livequery` rows go in
with one data-modifying CTE. Outside a transaction the one statement is its own transaction,
so a post costs one round trip instead of BEGIN, two INSERTs and COMMIT, and none of the ORM's
per-call compiling or per-row model building (measured in README, "Ingestion speed"). The
rows were validated once, by the API's serializer; `labelling.services.queries_create` would
validate them again. A unique violation (an external id posted before) fails the whole
statement, which leaves nothing behind: the caller then takes the ORM's careful path.

Every column without a database default is named here: `test_ingest_sql.py` holds this list
equal to the models' columns, on PostgreSQL, so a new column cannot be missed silently.
"""

import json
from functools import cache

from django.db import connection

from labelling.models import Query, QuerySource
from labelling.services import overlap_key_draw
from triage.models import IngestStatus, LiveQuery

# Columns a post writes, in order; the rest have database defaults (`invariants`, `origin`).
QUERY_COLUMNS = (
    "question",
    "sql",
    "dialect",
    "warehouse_id",
    "source",
    "gold_set_id",
    "external_id",
    "fingerprint",
    "reference_sql",
    "metadata",
    "created_at",
    "label_count",
    "overlap_key",
    "wants_second_label",
)
LIVE_COLUMNS = (
    "query_id",
    "api_token_id",
    "client",
    "external_id",
    "status",
    "policy_id",
    "enqueued_at",
    "enqueue_attempts",
    "started_at",
    "finished_at",
    "claim_token",
    "pipeline_attempts",
    "last_error",
    "verifier_result",
    "decision",
    "result_preview",
    "audit_query_id",
    "created_at",
)
# Columns the statement leaves to the database's own default.
DEFAULTED_COLUMNS = {"id", "invariants", "origin"}
_ROW = "(%s, %s, %s, %s, %s, NULL, %s, '', '', %s::jsonb, %s, 0, %s, false)"


@cache
def _statement(rows: int) -> str:
    """Return the statement for `rows` queries (cached per batch size)."""
    query_table, live_table = Query._meta.db_table, LiveQuery._meta.db_table
    return (
        f"WITH q AS (INSERT INTO {query_table} ({', '.join(QUERY_COLUMNS)}) VALUES "
        + ", ".join([_ROW] * rows)
        + f" RETURNING id, external_id) INSERT INTO {live_table} ({', '.join(LIVE_COLUMNS)}) "
        "SELECT q.id, %s, %s, q.external_id, %s, NULL, %s, 1, NULL, NULL, '', 0, '', '{}', '{}', '{}', NULL, %s "
        # External-id order: two posts of the same ids wait on the unique index, never deadlock.
        "FROM q ORDER BY q.external_id RETURNING query_id, external_id"
    )


def usable() -> bool:
    """Say whether this database takes the statement (PostgreSQL; SQLite has no INSERT in a CTE)."""
    return connection.vendor == "postgresql"


def live_rows_insert(*, rows: list[dict], warehouses: dict, token, now) -> list[LiveQuery]:
    """Insert validated rows as queries and live rows in one statement; return the live rows (unsaved copies).

    Raises IntegrityError, having stored nothing, when one of the external ids is stored already.
    """
    params = []
    for row in rows:
        warehouse = warehouses[row["warehouse"]]
        external_id = row["external_id"]
        params += [
            row["question"],
            row["sql"],
            row.get("dialect") or warehouse.dialect,
            warehouse.pk,
            QuerySource.LIVE,
            external_id,
            json.dumps(row.get("metadata") or {}),
            now,
            overlap_key_draw(external_id=external_id),
        ]
    params += [token.pk if token else None, token.client if token else "", IngestStatus.PENDING, now, now]
    with connection.cursor() as cursor:
        cursor.execute(_statement(len(rows)), params)
        stored = cursor.fetchall()
    client = token.client if token else ""
    return [
        LiveQuery(
            query_id=query_id,
            external_id=external_id,
            api_token=token,
            client=client,
            status=IngestStatus.PENDING,
            enqueued_at=now,
            enqueue_attempts=1,
            created_at=now,
        )
        for query_id, external_id in stored
    ]
