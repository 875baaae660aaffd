"""Store new live queries: one INSERT statement on PostgreSQL outside a transaction, the ORM elsewhere.

The one hand-built statement of ingestion, kept because the ORM alone costs a post more
than twice the CPU (4.0 ms against 1.9 ms in one process, measured while writing this) and
`make bench` then missed its target (the API's ceiling at 0.25 of a bare JSON endpoint's,
target 0.5). One statement is one round trip instead of BEGIN, two INSERTs and COMMIT, and
no ORM compilation. It stores the rows the callers built (the
queries by the labelling app's constructor, `labelling.services.queries_build`), and its
columns and values come from the models' own fields, so it follows the models as they change.
"""

import functools

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from labelling.models import Query
from triage.models import LiveQuery

# Filled from the query each live row belongs to; every other live column is the same for
# all rows of one call (they share token, client and publish time).
PER_ROW_LIVE_FIELDS = {"query": "new_queries.id", "external_id": "new_queries.external_id"}


def live_rows_insert(*, queries: list[Query], lives: list[LiveQuery]) -> list[LiveQuery]:
    """Store unsaved queries and their live rows (`lives[i]` belongs to `queries[i]`), atomically.

    Sets the ids on the given objects and returns the live rows. A unique violation (an
    external id already stored) raises IntegrityError and stores nothing.
    """
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor == "postgresql" and not db.in_atomic_block:
        _insert_in_one_statement(db, queries, lives)
        return lives
    with transaction.atomic(using=db.alias):
        Query.objects.bulk_create(queries)
        for query, live in zip(queries, lives, strict=True):
            live.query = query  # the id it was saved under
        return LiveQuery.objects.bulk_create(lives)


def _inserted_fields(model) -> list:
    """The fields an INSERT of `model` names: all but an auto-created primary key."""
    return [f for f in model._meta.concrete_fields if not (f.primary_key and f.auto_created)]


def _insert_values(obj, fields, db) -> list:
    """The values the ORM itself would insert for `obj` (defaults, auto_now_add, JSON adaptation)."""
    return [f.get_db_prep_save(f.pre_save(obj, add=True), db) for f in fields]


@functools.lru_cache(maxsize=64)
def _insert_statement(row_count: int) -> str:
    """One statement inserting `row_count` queries and a live row for each, returning their ids.

    The live rows go in in external-id order (byte order, as Python sorts): two posts of
    the same ids then wait for each other on the unique index instead of deadlocking.
    """
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    query_columns = [quote(f.column) for f in _inserted_fields(Query)]
    live_fields = _inserted_fields(LiveQuery)
    live_columns = [quote(f.column) for f in live_fields]
    live_selected = [PER_ROW_LIVE_FIELDS.get(f.name, "%s") for f in live_fields]
    placeholders = "(" + ", ".join(["%s"] * len(query_columns)) + ")"
    return (
        f"WITH new_queries AS (INSERT INTO {Query._meta.db_table} ({', '.join(query_columns)})"
        f" VALUES {', '.join([placeholders] * row_count)} RETURNING id, external_id),"
        f" new_lives AS (INSERT INTO {LiveQuery._meta.db_table} ({', '.join(live_columns)})"
        f' SELECT {", ".join(live_selected)} FROM new_queries ORDER BY new_queries.external_id COLLATE "C")'
        " SELECT id, external_id FROM new_queries"
    )


def _insert_in_one_statement(db, queries: list[Query], lives: list[LiveQuery]) -> None:
    values = [value for query in queries for value in _insert_values(query, _inserted_fields(Query), db)]
    shared_fields = [f for f in _inserted_fields(LiveQuery) if f.name not in PER_ROW_LIVE_FIELDS]
    values += _insert_values(lives[0], shared_fields, db)
    with db.cursor() as cursor:
        cursor.execute(_insert_statement(len(queries)), values)
        ids = {external_id: pk for pk, external_id in cursor.fetchall()}
    for query, live in zip(queries, lives, strict=True):
        query.pk = ids[query.external_id]
        live.query = query
        for obj in (query, live):
            obj._state.adding, obj._state.db = False, db.alias
