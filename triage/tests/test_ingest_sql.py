"""The ingestion API's one-statement insert on PostgreSQL stores what the ORM path stores."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from labelling.models import Query
from triage import ingest_sql
from triage.ingest import _insert_new
from triage.models import LiveQuery
from triage.tests import factories


def test_the_statement_names_every_column_without_a_database_default():
    for model, named in ((Query, ingest_sql.QUERY_COLUMNS), (LiveQuery, ingest_sql.LIVE_COLUMNS)):
        columns = {field.column for field in model._meta.concrete_fields}
        assert set(named) | (ingest_sql.DEFAULTED_COLUMNS & columns) == columns, model
        defaulted = {f.column for f in model._meta.concrete_fields if f.column not in named and not f.primary_key}
        assert all(
            model._meta.get_field(f.name).has_db_default() for f in model._meta.concrete_fields if f.column in defaulted
        )


ROW = {"question": "How many?", "sql": "SELECT 1", "warehouse": "shop", "metadata": {"generator": "bench", "n": [1]}}


def stored(query_id: int) -> tuple[dict, dict]:
    """Return a query's and its live row's stored fields, minus what differs by construction."""

    def fields(row, *exclude):
        return {f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields if f.attname not in exclude}

    query = fields(Query.objects.get(pk=query_id), "id", "external_id", "overlap_key", "created_at")
    live = fields(LiveQuery.objects.get(pk=query_id), "query_id", "external_id", "enqueued_at", "created_at")
    return query, live


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_statement_stores_the_same_rows_as_the_orm():
    warehouse = factories.warehouse("shop")
    token, _ = factories.token()
    with transaction.atomic():
        [orm] = _insert_new([ROW | {"external_id": "by-orm"}], token, {"shop": warehouse})
    [fast] = ingest_sql.live_rows_insert(
        rows=[ROW | {"external_id": "by-sql"}], warehouses={"shop": warehouse}, token=token, now=orm.created_at
    )
    orm_query, orm_live = stored(orm.pk)
    fast_query, fast_live = stored(fast.pk)
    assert fast_query == orm_query and fast_live == orm_live  # times and the overlap draw differ by design
    assert LiveQuery.objects.get(pk=fast.pk).created_at == Query.objects.get(pk=fast.pk).created_at == orm.created_at
    assert Query.objects.get(pk=fast.pk).overlap_key == pytest.approx(ingest_sql.overlap_key_draw(external_id="by-sql"))
    assert (fast.external_id, fast.client, fast.status) == ("by-sql", "acme", "pending")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_repeated_external_id_fails_the_whole_statement_and_stores_nothing():
    warehouse = factories.warehouse("shop")
    ingest_sql.live_rows_insert(
        rows=[ROW | {"external_id": "a"}], warehouses={"shop": warehouse}, token=None, now=timezone.now()
    )
    before = Query.objects.count()
    with pytest.raises(IntegrityError):
        ingest_sql.live_rows_insert(
            rows=[ROW | {"external_id": "b"}, ROW | {"external_id": "a"}],
            warehouses={"shop": warehouse},
            token=None,
            now=timezone.now(),
        )
    assert Query.objects.count() == before and not Query.objects.filter(external_id="b").exists()
    assert connection.vendor == "postgresql"
