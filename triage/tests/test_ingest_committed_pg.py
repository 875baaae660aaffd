"""Ingestion on PostgreSQL with real commits: ids map to their rows, a repost stores nothing twice.

Test transactions would hide what a post outside any transaction does, so these tests commit.
"""

import pytest

from labelling.models import Query, QuerySource
from triage.ingest import live_queries_ingest
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def rows(*external_ids, **extra):
    return [
        {"external_id": e, "question": f"Question {e}?", "sql": f"SELECT {i}", "warehouse": "shop"} | extra
        for i, e in enumerate(external_ids)
    ]


def test_a_list_maps_each_external_id_to_its_own_stored_id():
    factories.warehouse("shop")
    ingested = live_queries_ingest(rows=rows("c", "a", "b"))
    by_external = dict(Query.objects.filter(source=QuerySource.LIVE).values_list("external_id", "pk"))
    assert [entry.live.external_id for entry in ingested] == ["c", "a", "b"]
    assert [entry.live.pk for entry in ingested] == [by_external["c"], by_external["a"], by_external["b"]]
    assert LiveQuery.objects.filter(pk__in=by_external.values()).count() == 3
    assert Query.objects.get(pk=ingested[0].live.pk).sql == "SELECT 0"


def test_a_repost_outside_a_transaction_stores_nothing_twice():
    factories.warehouse("shop")
    [first] = live_queries_ingest(rows=rows("same"))
    again = live_queries_ingest(rows=rows("same", "new"))
    assert [entry.created for entry in again] == [False, True]
    assert again[0].live.pk == first.live.pk
    assert Query.objects.filter(source=QuerySource.LIVE, external_id="same").count() == 1
    assert LiveQuery.objects.count() == Query.objects.filter(source=QuerySource.LIVE).count() == 2
