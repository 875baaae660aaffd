"""Posts waiting for the statement in flight go in together, each gets its own rows, and a failure stays its own.

The waiting posts are real threads calling `StatementSharing.store`; the test plays the thread
whose statement was in flight, so which posts share one statement does not depend on timing.
"""

import threading
import time
from types import SimpleNamespace

import pytest
from django.db import IntegrityError, connections
from django.utils import timezone

from labelling.models import Query
from triage import ingest_sql
from triage.ingest_sharing import RUN_ALONE, StatementSharing, _Post
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROW = {"question": "How many?", "sql": "SELECT 1", "warehouse": "shop"}


def rows_of(token, *external_ids, warehouse):
    rows = [ROW | {"external_id": e} for e in external_ids]
    return ingest_sql.statement_rows(rows=rows, warehouses={"shop": warehouse}, token=token)


def waiting_posts(sharing: StatementSharing, posts: list[list[dict]]) -> tuple[list[threading.Thread], dict]:
    """Start one thread per post, each storing it while a statement is in flight; wait until all wait."""
    answers: dict[int, object] = {}

    def post(index, rows):
        try:
            answers[index] = sharing.store(rows)
        except Exception as error:  # noqa: BLE001 - the test reads what each post saw
            answers[index] = error
        finally:
            connections.close_all()

    sharing._busy = True  # the test's own statement is in flight
    threads = [threading.Thread(target=post, args=(index, rows)) for index, rows in enumerate(posts)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(sharing._waiting) < len(posts) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(sharing._waiting) == len(posts)
    return threads, answers


def test_waiting_posts_go_in_one_statement_and_each_gets_its_own_rows():
    warehouse = factories.warehouse("shop")
    acme, _ = factories.token()
    other, _ = factories.token(client="other")
    ingest_sql.statement_run(rows=rows_of(acme, "old", warehouse=warehouse), now=timezone.now())
    sharing = StatementSharing()
    posts = [
        rows_of(acme, "a", "b", warehouse=warehouse),
        rows_of(acme, "b", "c", "old", warehouse=warehouse),  # "b" is the first post's; "old" is stored
        rows_of(other, "a", warehouse=warehouse),  # another client's "a" is a query of its own
    ]
    threads, answers = waiting_posts(sharing, posts)
    leader = _Post(rows_of(acme, "d", warehouse=warehouse))
    leader.leads = True
    sharing._lead(leader)  # the statement in flight ends: this thread stores every waiting post
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(live.external_id for live in leader.stored) == ["d"]
    assert sorted(live.external_id for live in answers[0]) == ["a", "b"]
    assert sorted(live.external_id for live in answers[1]) == ["c"]  # the caller reads "b" and "old" back
    assert [(live.client, live.external_id) for live in answers[2]] == [("other", "a")]
    assert LiveQuery.objects.count() == Query.objects.count() == 6  # old, a, b, c, d and other's a
    assert not sharing._busy and not sharing._waiting


def test_a_failing_post_fails_alone_and_the_others_are_stored():
    warehouse = factories.warehouse("shop")
    acme, _ = factories.token()
    gone = SimpleNamespace(pk=warehouse.pk + 10_000, dialect="sqlite")  # a warehouse deleted meanwhile
    sharing = StatementSharing()
    posts = [rows_of(acme, "fine-1", warehouse=warehouse), rows_of(acme, "broken", warehouse=gone)]
    threads, answers = waiting_posts(sharing, posts)
    leader = _Post(rows_of(acme, "fine-2", warehouse=warehouse))
    leader.leads = True
    sharing._lead(leader)
    for thread in threads:
        thread.join(timeout=30)
    assert [live.external_id for live in answers[0]] == ["fine-1"]
    assert isinstance(answers[1], IntegrityError)
    assert leader.stored is RUN_ALONE  # the shared statement failed: the leader runs its own too
    assert [live.external_id for live in sharing.store(leader.rows)] == ["fine-2"]
    assert set(LiveQuery.objects.values_list("external_id", flat=True)) == {"fine-1", "fine-2"}
    assert LiveQuery.objects.count() == Query.objects.count() == 2
