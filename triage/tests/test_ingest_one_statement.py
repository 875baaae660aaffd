"""The ingestion hot path on PostgreSQL: a post outside any transaction is one INSERT statement.

Test transactions would turn it into the ORM path (a savepoint and two inserts), so these
tests run with real commits.
"""

import pytest
from django.db import connection, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from labelling.models import Query, QuerySource
from triage.models import IngestStatus, LiveQuery
from triage.services import live_queries_ingest
from triage.tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

VOLATILE = {"id", "query", "external_id", "created_at", "enqueued_at"}


def rows(*external_ids, **extra):
    return [
        {"external_id": e, "question": f"Question {e}?", "sql": f"SELECT {i}", "warehouse": "shop"} | extra
        for i, e in enumerate(external_ids)
    ]


def stored(external_id) -> tuple[dict, dict]:
    query = Query.objects.get(source=QuerySource.LIVE, external_id=external_id)
    live = LiveQuery.objects.get(pk=query.pk)
    strip = lambda values: {k: v for k, v in values.items() if k not in VOLATILE}  # noqa: E731
    return strip(model_to_dict(query)), strip(model_to_dict(live))


def test_a_post_outside_a_transaction_is_one_statement_storing_what_the_orm_would():
    factories.warehouse("shop")
    token_row, _ = factories.token()
    with CaptureQueriesContext(connection) as captured:
        [fast] = live_queries_ingest(rows=rows("fast", metadata={"k": [1, "two"]}), token=token_row)
    inserts = [q["sql"] for q in captured.captured_queries if "INSERT" in q["sql"]]
    assert len(inserts) == 1 and "labelling_query" in inserts[0] and "triage_livequery" in inserts[0]
    assert not any(q["sql"].startswith(("SAVEPOINT", "BEGIN")) for q in captured.captured_queries)

    with transaction.atomic():  # the ORM path: what the one statement must match
        [careful] = live_queries_ingest(rows=rows("orm", metadata={"k": [1, "two"]}), token=token_row)

    fast_query, fast_live = stored("fast")
    orm_query, orm_live = stored("orm")
    assert fast_query == orm_query | {"question": "Question fast?"}
    assert fast_live == orm_live
    assert fast_live["status"] == IngestStatus.PENDING and fast_live["enqueue_attempts"] == 1
    assert fast.created and fast.live.pk == fast.live.query.pk == Query.objects.get(external_id="fast").pk
    assert careful.live.query.external_id == "orm"


def test_a_list_maps_each_external_id_to_its_own_stored_id():
    factories.warehouse("shop")
    ingested = live_queries_ingest(rows=rows("c", "a", "b"))
    by_external = dict(Query.objects.filter(source=QuerySource.LIVE).values_list("external_id", "pk"))
    assert [entry.live.query.external_id for entry in ingested] == ["c", "a", "b"]
    assert [entry.live.pk for entry in ingested] == [by_external["c"], by_external["a"], by_external["b"]]
    assert LiveQuery.objects.filter(pk__in=by_external.values()).count() == 3
    assert Query.objects.get(pk=ingested[0].live.pk).sql == "SELECT 0"


def test_a_repost_outside_a_transaction_falls_back_and_stores_nothing_twice():
    factories.warehouse("shop")
    [first] = live_queries_ingest(rows=rows("same"))
    again = live_queries_ingest(rows=rows("same", "new"))
    assert [entry.created for entry in again] == [False, True]
    assert again[0].live.pk == first.live.pk
    assert Query.objects.filter(source=QuerySource.LIVE, external_id="same").count() == 1
    assert LiveQuery.objects.count() == Query.objects.filter(source=QuerySource.LIVE).count() == 2
