"""The ingestion API's one-statement insert on PostgreSQL stores what the ORM path stores."""

import pytest
from django.db import connection, transaction
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
def test_a_stored_external_id_is_skipped_and_leaves_no_query_without_its_live_row():
    warehouse = factories.warehouse("shop")
    token, _ = factories.token()
    [first] = ingest_sql.live_rows_insert(
        rows=[ROW | {"external_id": "a"}], warehouses={"shop": warehouse}, token=token, now=timezone.now()
    )
    again = ingest_sql.live_rows_insert(
        rows=[ROW | {"external_id": "b"}, ROW | {"external_id": "a"}, ROW | {"external_id": "c"}],
        warehouses={"shop": warehouse},
        token=token,
        now=timezone.now(),
    )
    assert sorted(live.external_id for live in again) == ["b", "c"]
    assert LiveQuery.objects.get(client="acme", external_id="a").pk == first.pk
    assert Query.objects.filter(external_id="a").count() == 1
    # Every query the statement stored has its live row, under the same id.
    assert set(Query.objects.values_list("pk", flat=True)) == set(LiveQuery.objects.values_list("pk", flat=True))
    [other_client] = ingest_sql.live_rows_insert(
        rows=[ROW | {"external_id": "a"}], warehouses={"shop": warehouse}, token=None, now=timezone.now()
    )
    assert other_client.pk != first.pk and other_client.client == ""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_statement_stores_a_whole_batch_as_fetched_rows():
    warehouse = factories.warehouse("shop")
    rows = [ROW | {"external_id": f"batch-{n:03d}", "sql": f"SELECT {n}"} for n in range(120)]
    lives = ingest_sql.live_rows_insert(rows=rows, warehouses={"shop": warehouse}, token=None, now=timezone.now())
    assert len(lives) == 120
    stored = dict(Query.objects.filter(external_id__startswith="batch-").values_list("external_id", "sql"))
    assert stored == {row["external_id"]: row["sql"] for row in rows}
    assert {live.pk for live in lives} == set(LiveQuery.objects.values_list("pk", flat=True))
    assert connection.vendor == "postgresql"
