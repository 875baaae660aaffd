"""The one hand-built ingestion statement stores exactly what the ORM stores, on either database.

It runs on PostgreSQL outside a transaction only; these tests commit for real so that it
does, and on SQLite they check the ORM path the same way.
"""

import pytest
from django.db import IntegrityError, connection, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from labelling.models import Query, QuerySource
from labelling.services import queries_build
from triage.ingest_statement import live_rows_insert
from triage.models import IngestStatus, LiveQuery
from triage.tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

VOLATILE = {"id", "query", "external_id", "question", "created_at", "enqueued_at", "overlap_key"}


def build(token, warehouse, *external_ids):
    queries = queries_build(
        queries=[
            {"question": f"Question {e}?", "sql": "SELECT 1", "external_id": e, "warehouse": warehouse}
            | {"metadata": {"k": [1, "two"], "text": "naïve ☃"}}
            for e in external_ids
        ],
        source=QuerySource.LIVE,
        fingerprint=False,
    )
    lives = [
        LiveQuery(external_id=q.external_id, api_token=token, client=token.client, enqueue_attempts=1) for q in queries
    ]
    return {"queries": queries, "lives": lives}


def stored(external_id) -> tuple[dict, dict]:
    query = Query.objects.get(source=QuerySource.LIVE, external_id=external_id)
    live = LiveQuery.objects.get(pk=query.pk)
    strip = lambda values: {k: v for k, v in values.items() if k not in VOLATILE}  # noqa: E731
    return strip(model_to_dict(query)), strip(model_to_dict(live))


def test_new_live_rows_are_stored_as_the_orm_stores_them_with_their_ids_set():
    warehouse = factories.warehouse("shop")
    token, _ = factories.token()
    with CaptureQueriesContext(connection) as captured:
        lives = live_rows_insert(**build(token, warehouse, "b-fast", "a-fast"))
    inserts = [q["sql"] for q in captured.captured_queries if q["sql"].startswith(("INSERT", "WITH"))]
    assert len(inserts) == (1 if connection.vendor == "postgresql" else 2)

    with transaction.atomic():  # inside a transaction: always the ORM
        live_rows_insert(**build(token, warehouse, "orm"))

    assert stored("a-fast") == stored("b-fast") == stored("orm")
    query, live = stored("orm")
    assert live["status"] == IngestStatus.PENDING and live["client"] == token.client
    assert query["metadata"] == {"k": [1, "two"], "text": "naïve ☃"} and query["source"] == QuerySource.LIVE
    by_external = dict(Query.objects.values_list("external_id", "pk"))
    assert [(live.external_id, live.pk, live.query.pk) for live in lives] == [
        ("b-fast", by_external["b-fast"], by_external["b-fast"]),
        ("a-fast", by_external["a-fast"], by_external["a-fast"]),
    ]
    assert not any(obj._state.adding for live in lives for obj in (live, live.query))


def test_a_stored_external_id_stores_nothing():
    warehouse = factories.warehouse("shop")
    token, _ = factories.token()
    live_rows_insert(**build(token, warehouse, "same"))
    with pytest.raises(IntegrityError):
        live_rows_insert(**build(token, warehouse, "new", "same"))
    assert list(Query.objects.values_list("external_id", flat=True)) == ["same"]
    assert LiveQuery.objects.count() == 1
