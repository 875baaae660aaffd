"""The ingestion API's one hand-built statement: a post's queries and live rows in one round trip.

On PostgreSQL a post's rows, however many (or the rows of several concurrent posts, any clients:
`triage/ingest_sharing.py`), go in with one data-modifying statement: the rows travel as one JSON
parameter (`json_to_recordset`), each with its token and client, each gets a `labelling_query` id from
that table's sequence, the `triage_livequery` rows go in first with `ON CONFLICT DO NOTHING` on
(client, external id), and only the live rows that went in get their `labelling_query` row
(the foreign key is checked at commit, so the order is allowed). An external id posted before
is skipped, never stored twice and never leaves a query without its live row. Outside a
transaction the one statement is its own transaction: a post costs one round trip instead of
BEGIN, two INSERTs and COMMIT, and none of the ORM's per-row model building or per-parameter
quoting (measured in README, "Ingestion speed"). The rows were validated once, by the API's
row check (`triage/ingest_rows.py`); `labelling.services.queries_create` would validate them again.

Every column without a database default is named here: `test_ingest_sql.py` holds this list
equal to the models' columns, on PostgreSQL, so a new column cannot be missed silently.
"""

import json
from dataclasses import dataclass
from functools import cache

from django.db import connection

from labelling.bulk import QUERY_INSERT_FIELDS
from labelling.models import Query, QuerySource
from labelling.services import overlap_key_draw
from triage.models import IngestStatus, LiveQuery

# Columns a post writes, in order; the rest have database defaults (`invariants`, `origin`).
QUERY_COLUMNS = ("id", *(Query._meta.get_field(name).column for name in QUERY_INSERT_FIELDS))
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
DEFAULTED_COLUMNS = {"invariants", "origin"}
# What each row carries in the JSON parameter, and its SQL type.
ROW_FIELDS = (
    ("api_token_id", "bigint"),
    ("client", "text"),
    ("external_id", "text"),
    ("question", "text"),
    ("sql", "text"),
    ("dialect", "text"),
    ("warehouse_id", "bigint"),
    ("metadata", "jsonb"),
    ("overlap_key", "double precision"),
)
UNIQUE_CLIENT_EXTERNAL_ID = "triage_livequery_unique_client_external_id"


@dataclass(frozen=True, slots=True)
class StoredLiveQuery:
    """A live row the statement stored, as ingestion's callers read it: no model instance per row.

    Building a `LiveQuery` per row (eighteen fields, four foreign-key descriptors) cost a tenth
    of a batched post's CPU; the API's answer, the attempts and the publisher need only these.
    """

    pk: int
    external_id: str
    client: str
    status: str = IngestStatus.PENDING


@cache
def _statement() -> str:
    """Return the statement (one text whatever the number of rows, so the driver's caches keep it)."""
    query_table, live_table = Query._meta.db_table, LiveQuery._meta.db_table
    row_type = ", ".join(f"{name} {kind}" for name, kind in ROW_FIELDS)
    return (
        # Materialised once: each row draws its query id exactly once.
        f"WITH input AS MATERIALIZED (SELECT nextval(pg_get_serial_sequence('{query_table}', 'id')) AS id, r.* "
        f"FROM json_to_recordset(%s::json) AS r({row_type})), "
        f"live AS (INSERT INTO {live_table} ({', '.join(LIVE_COLUMNS)}) "
        "SELECT input.id, input.api_token_id, input.client, input.external_id, %s, NULL, %s, 1, NULL, NULL, '', 0, "
        "'', '{}', '{}', '{}', NULL, %s "
        # Key order: two statements of the same ids wait on the unique index, never deadlock.
        "FROM input ORDER BY input.client, input.external_id "
        f"ON CONFLICT ON CONSTRAINT {UNIQUE_CLIENT_EXTERNAL_ID} DO NOTHING "
        "RETURNING query_id, client, external_id), "
        f"stored AS (INSERT INTO {query_table} ({', '.join(QUERY_COLUMNS)}) "
        "SELECT input.id, input.question, input.sql, input.dialect, input.warehouse_id, %s, NULL, input.external_id, "
        "'', '', input.metadata, %s, 0, input.overlap_key, false FROM input JOIN live ON live.query_id = input.id) "
        "SELECT query_id, client, external_id FROM live"
    )


def usable() -> bool:
    """Say whether this database takes the statement (PostgreSQL; SQLite has no INSERT in a CTE)."""
    return connection.vendor == "postgresql"


def statement_rows(*, rows: list[dict], warehouses: dict, token) -> list[dict]:
    """Return validated API rows as the statement's JSON rows (a token's client and id on each)."""
    token_id, client = (token.pk, token.client) if token else (None, "")
    payload = []
    for row in rows:
        warehouse = warehouses[row["warehouse"]]
        external_id = row["external_id"]
        payload.append(
            {
                "api_token_id": token_id,
                "client": client,
                "external_id": external_id,
                "question": row["question"],
                "sql": row["sql"],
                "dialect": row.get("dialect") or warehouse.dialect,
                "warehouse_id": warehouse.pk,
                "metadata": row.get("metadata") or {},
                "overlap_key": overlap_key_draw(external_id=external_id),
            }
        )
    return payload


def statement_run(*, rows: list[dict], now) -> list[StoredLiveQuery]:
    """Store `statement_rows` output (of any number of posts and clients) in one statement; return the new rows.

    A row whose (client, external id) is stored already is skipped and absent from the result (a
    concurrent statement's row is waited for, then skipped); so is the second of two equal keys.
    Rows must be free of NUL characters and lone surrogates, which the API's validation refuses.
    """
    params = [json.dumps(rows, ensure_ascii=False, separators=(",", ":")), IngestStatus.PENDING, now, now]
    params += [QuerySource.LIVE, now]
    with connection.cursor() as cursor:
        cursor.execute(_statement(), params)
        stored = cursor.fetchall()
    return [
        StoredLiveQuery(pk=query_id, external_id=external_id, client=client) for query_id, client, external_id in stored
    ]


def live_rows_insert(*, rows: list[dict], warehouses: dict, token, now) -> list[StoredLiveQuery]:
    """Insert validated rows as queries and live rows in one statement; return what a caller reads of the new ones."""
    return statement_run(rows=statement_rows(rows=rows, warehouses=warehouses, token=token), now=now)
