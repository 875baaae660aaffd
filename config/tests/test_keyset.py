"""Keyset pagination (config/keyset.py): every row once, in order, one query a chunk, never OFFSET."""

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config.keyset import keyset_chunks, keyset_rows

pytestmark = pytest.mark.django_db
ORDER = ("-is_active", "last_name", "-first_name", "pk")


@pytest.fixture
def users():
    """Users with many ties on every key but the last."""
    rng = np.random.default_rng(5)
    User.objects.bulk_create(
        User(
            username=f"user-{index}",
            is_active=bool(rng.integers(0, 2)),
            last_name=str(rng.choice(["a", "b", "c"])),
            first_name=str(rng.choice(["x", "y"])),
        )
        for index in range(37)
    )
    return User.objects.all()


@pytest.mark.parametrize("chunk", [1, 2, 5, 37, 100])
def test_keyset_pages_yield_every_row_once_in_the_querysets_order(users, chunk):
    expected = list(users.order_by(*ORDER).values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as captured:
        got = [user.pk for user in keyset_rows(users, ORDER, chunk=chunk)]
    assert got == expected
    # One query a chunk, and one more that finds the end when the last chunk was full.
    assert len(captured) == len(expected) // chunk + 1
    assert not any("OFFSET" in query["sql"].upper() for query in captured.captured_queries)


def test_values_list_rows_page_by_the_key_they_name(users):
    rows = users.values_list("pk", "username")
    chunks = list(keyset_chunks(rows, ("pk",), chunk=10, key=lambda row: (row[0],)))
    assert [len(chunk) for chunk in chunks] == [10, 10, 10, 7]
    assert [row[0] for chunk in chunks for row in chunk] == sorted(users.values_list("pk", flat=True))


def test_an_empty_queryset_yields_nothing_in_one_query(db):
    with CaptureQueriesContext(connection) as captured:
        assert list(keyset_rows(User.objects.none().all(), ("pk",))) == []
        assert list(keyset_rows(User.objects.filter(username="nobody"), ("pk",))) == []
    assert len(captured) <= 1
