"""Recorded attempts: posted with live queries, imported from JSONL, constrained, replayed on the dashboard."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from loops.models import RequestAttempt
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = pytest.mark.django_db
URL = "/api/v1/queries"


@pytest.fixture
def post(client):
    factories.warehouse("shop")
    _, plaintext = factories.token()

    def call(body):
        return client.post(
            URL, data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {plaintext}"
        )

    return call


def row(external_id="q-1", **extra):
    return {"external_id": external_id, "question": "Revenue?", "sql": "SELECT 1", "warehouse": "shop"} | extra


ATTEMPTS = [
    {"tier": "cheap", "failure_class": "unknown_object", "tokens": 120, "latency_ms": 950.5},
    {"tier": "strong", "failure_class": None, "cost_usd": "0.06", "latency_ms": 12000},
]


def stored(live_id):
    return list(
        RequestAttempt.objects.filter(live_query_id=live_id).values_list(
            "position", "tier", "attempt", "failure_class", "tokens", "latency_ms"
        )
    )


def test_a_query_posted_with_its_attempts_stores_them_in_order_with_seed_001_classes(post):
    response = post(row(attempts=ATTEMPTS))
    assert response.status_code == 202
    assert stored(response.json()["id"]) == [
        (1, "cheap", 1, "unknown_obj", 120, 950.5),
        (2, "strong", 1, "", None, 12000.0),
    ]


def test_reposting_a_query_with_its_attempts_stores_them_once(post):
    first = post(row(attempts=ATTEMPTS)).json()
    assert post(row(attempts=ATTEMPTS)).status_code == 200
    assert len(stored(first["id"])) == 2


def test_a_query_without_attempts_is_ingested_as_before(post):
    response = post([row("a"), row("b", attempts=ATTEMPTS[:1])])
    assert response.status_code == 202
    ids = [entry["id"] for entry in response.json()]
    assert (len(stored(ids[0])), len(stored(ids[1]))) == (0, 1)


@pytest.mark.parametrize(
    ("attempts", "field"),
    [
        ([{"tier": "cheap", "failure_class": "gremlins"}], "failure_class"),
        ([{"tier": "cheap", "tokens": -1}], "tokens"),
        ([{"failure_class": None}], "tier"),
        ([{"tier": "cheap", "attempt": 1}, {"tier": "cheap", "attempt": 1}], "twice"),
        ([{"tier": "cheap"}] * 51, "50"),
    ],
)
def test_bad_attempts_reject_the_query_and_store_nothing(post, attempts, field):
    response = post(row(attempts=attempts))
    assert response.status_code == 400
    assert field in json.dumps(response.json())
    assert not LiveQuery.objects.exists() and not RequestAttempt.objects.exists()


def test_one_position_holds_one_attempt():
    live = factories.live_query()
    RequestAttempt.objects.create(live_query=live, position=1, tier="cheap", attempt=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        RequestAttempt.objects.create(live_query=live, position=1, tier="cheap", attempt=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        RequestAttempt.objects.create(live_query=live, position=2, tier="cheap", attempt=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        RequestAttempt.objects.create(live_query=live, position=0, tier="cheap", attempt=3)


def write(tmp_path, rows) -> str:
    path = tmp_path / "attempts.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return str(path)


def test_import_attaches_attempts_to_live_queries_and_a_rerun_adds_nothing(tmp_path):
    live = factories.live_query(external_id="req-1")
    path = write(
        tmp_path,
        [
            {"request_id": "req-1", "tier": "cheap", "attempt": 1, "failure_class": "syntax", "tokens": 10},
            {"request_id": "req-1", "tier": "cheap", "attempt": 2, "failure_class": None, "tokens": 12},
        ],
    )
    out = StringIO()
    call_command("import_attempts", path, stdout=out)
    assert "2 attempts of 1 requests" in out.getvalue()
    call_command("import_attempts", path, stdout=StringIO())
    assert stored(live.pk) == [(1, "cheap", 1, "syntax", 10, None), (2, "cheap", 2, "", 12, None)]


def test_import_of_an_unknown_request_or_a_bad_line_stores_nothing(tmp_path):
    factories.live_query(external_id="req-1")
    good = {"request_id": "req-1", "tier": "cheap", "attempt": 1, "failure_class": None}
    with pytest.raises(CommandError, match="match no live query: 'ghost'"):
        call_command("import_attempts", write(tmp_path, [good, good | {"request_id": "ghost"}]))
    with pytest.raises(CommandError, match="line 2"):
        call_command("import_attempts", write(tmp_path, [good, good | {"failure_class": "gremlins"}]))
    assert not RequestAttempt.objects.exists()
