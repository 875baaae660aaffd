"""Concurrent posts of the same ids in different orders on PostgreSQL: no deadlock, no duplicate.

Each post inserted its rows in the order posted, so two posts of {a, b} as [a, b] and
[b, a] each held the row the other needed: PostgreSQL killed one ("deadlock detected")
and the client got a 500. Rows now go in in one order, and a deadlock victim retries.
"""

import json

import pytest
from django.db import connection
from django.test import Client

from labelling.models import Query, QuerySource
from tests.support.concurrency import run_concurrently
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
URL = "/api/v1/queries"
POSTS = 20
ROUNDS = 3
# Each inserted row costs the server a few milliseconds more, as on a busy server: posts
# then overlap in the database, not only in Python, and rows going in in the order posted
# deadlock in nearly every round.
SLOW_ROW = """
CREATE OR REPLACE FUNCTION test_slow_row() RETURNS trigger AS $$
BEGIN PERFORM pg_sleep(0.01); RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE TRIGGER test_slow_query BEFORE INSERT ON labelling_query FOR EACH ROW EXECUTE FUNCTION test_slow_row();
CREATE TRIGGER test_slow_live BEFORE INSERT ON triage_livequery FOR EACH ROW EXECUTE FUNCTION test_slow_row();
"""


@pytest.fixture
def slow_rows():
    with connection.cursor() as cursor:
        cursor.execute(SLOW_ROW)
    yield
    with connection.cursor() as cursor:
        cursor.execute(
            "DROP TRIGGER test_slow_query ON labelling_query; DROP TRIGGER test_slow_live ON triage_livequery;"
            " DROP FUNCTION test_slow_row();"
        )


def ids_of(round_number: int) -> list[str]:
    return [f"r{round_number}-{letter}" for letter in "abcde"]


def rotated(round_number: int, shift: int) -> list[dict]:
    ids = ids_of(round_number)
    ids = ids[shift % len(ids) :] + ids[: shift % len(ids)]
    return [{"external_id": e, "question": f"{e}?", "sql": "SELECT 1", "warehouse": "shop"} for e in ids]


def post_batch(token: str, round_number: int, shift: int):
    response = Client(raise_request_exception=False).post(
        URL,
        data=json.dumps(rotated(round_number, shift)),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    return response.status_code, response.json() if response.status_code < 500 else response.content[-300:]


@pytest.mark.parametrize("round_number", range(ROUNDS))
def test_twenty_posts_of_the_same_ids_in_rotated_orders_all_succeed_and_store_each_once(slow_rows, round_number):
    factories.warehouse("shop")
    _, token = factories.token(client="racer")
    results = run_concurrently(post_batch, [(token, round_number, shift) for shift in range(POSTS)])
    statuses = [status for status, _ in results]
    assert statuses == [202] * POSTS, [body for status, body in results if status != 202][:2]
    ids = ids_of(round_number)
    assert LiveQuery.objects.filter(client="racer").count() == len(ids)
    assert Query.objects.filter(source=QuerySource.LIVE).count() == len(ids)
    # Each id is reported created by exactly one post, and every post names the stored row.
    stored = dict(LiveQuery.objects.values_list("query__external_id", "pk"))
    created = [entry["external_id"] for _, body in results for entry in body if entry["created"]]
    assert sorted(created) == ids
    for shift, (_, body) in enumerate(results):
        assert [entry["external_id"] for entry in body] == [row["external_id"] for row in rotated(round_number, shift)]
        assert all(entry["id"] == stored[entry["external_id"]] for entry in body)
