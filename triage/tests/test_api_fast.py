"""Posts answered without DRF (one query or a list) answer as QueryIngestView does; the rest reaches that view."""

import json

import pytest
from django.http import JsonResponse
from django.test import RequestFactory

from loops.models import RequestAttempt
from triage.api import QueryIngestView
from triage.api_fast import query_ingest
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = pytest.mark.django_db
BODY = {"external_id": "x-1", "question": "How many?", "sql": "SELECT 1", "warehouse": "shop", "metadata": {"a": "é"}}


@pytest.fixture
def token():
    factories.warehouse("shop")
    return factories.token()[1]


def post(view, token, body, **extra):
    request = RequestFactory().post(
        "/api/v1/queries", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    response = view(request)
    if hasattr(response, "render"):
        response.render()
    return response


def test_a_plain_post_gets_the_same_answer_from_both_views(token, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        fast = post(query_ingest, token, BODY)
        fast_again = post(query_ingest, token, BODY)
        full_again = post(QueryIngestView.as_view(), token, BODY)
        full = post(QueryIngestView.as_view(), token, BODY | {"external_id": "x-2"})
    assert (fast.status_code, fast_again.status_code, full_again.status_code, full.status_code) == (202, 200, 200, 202)
    assert fast_again.content == full_again.content  # byte for byte
    assert json.loads(fast.content).keys() == json.loads(full.content).keys()
    assert fast["Content-Type"] == full["Content-Type"] == "application/json"
    stored = LiveQuery.objects.select_related("query").get(external_id="x-1")
    assert stored.query.metadata == {"a": "é"} and stored.query.sql == "SELECT 1"


@pytest.mark.parametrize(
    "change",
    [
        {"external_id": " padded "},  # the serializer trims it
        {"question": ""},
        {"warehouse": "no-such-warehouse"},
        {"dialect": "oracle"},
        {"metadata": None},
        {"attempts": [{"tier": "not a slug"}]},
        {"attempts": [{"tier": "cheap", "attempt": 1}, {"tier": "cheap", "attempt": 1}]},
        {"dialect": ["sqlite"]},  # unhashable: a 400, never a server error
        {"external_id": 7},
        {"unknown": "field"},
    ],
)
def test_what_only_the_serializer_may_judge_goes_to_the_full_view(token, change, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        fast = post(query_ingest, token, BODY | change)
    LiveQuery.objects.all().delete()
    with django_capture_on_commit_callbacks():
        full = post(QueryIngestView.as_view(), token, BODY | change)
    assert fast.status_code == full.status_code
    assert json.loads(fast.content).keys() == json.loads(full.content).keys()


def test_a_bad_token_is_refused_by_the_full_view(token):
    response = post(query_ingest, "dkt_not-a-token", BODY)
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Bearer"
    assert not LiveQuery.objects.exists()


def test_a_token_without_the_ingest_scope_is_refused(token):
    _, read_only = factories.token(scopes=("read",), client="reader")
    assert post(query_ingest, read_only, BODY).status_code == 403
    assert not LiveQuery.objects.exists()


def test_a_list_gets_the_same_answer_from_both_views(token, django_capture_on_commit_callbacks):
    rows = [BODY | {"external_id": f"list-{n}"} for n in (2, 1, 3)]
    with django_capture_on_commit_callbacks():
        fast = post(query_ingest, token, rows)
        fast_again = post(query_ingest, token, rows)
        full_again = post(QueryIngestView.as_view(), token, rows)
    assert (fast.status_code, fast_again.status_code, full_again.status_code) == (202, 202, 202)
    assert isinstance(fast, JsonResponse) and isinstance(fast_again, JsonResponse)  # answered without DRF
    assert fast_again.content == full_again.content  # byte for byte
    answers = json.loads(fast.content)
    assert [a["external_id"] for a in answers] == ["list-2", "list-1", "list-3"]
    assert all(a["created"] for a in answers) and not any(a["created"] for a in json.loads(fast_again.content))
    assert LiveQuery.objects.filter(external_id__startswith="list-").count() == 3


def test_attempts_posted_with_a_list_are_stored_once(token, django_capture_on_commit_callbacks):
    attempts = [{"tier": "cheap", "failure_class": "syntax", "tokens": 12}, {"tier": "cheap"}]
    rows = [BODY | {"external_id": "with-attempts", "attempts": attempts}, BODY | {"external_id": "without"}]
    with django_capture_on_commit_callbacks():
        first = post(query_ingest, token, rows)
        assert post(query_ingest, token, rows).status_code == 202
    assert first.status_code == 202 and isinstance(first, JsonResponse)
    stored = RequestAttempt.objects.filter(live_query__external_id="with-attempts").order_by("position")
    assert [(a.tier, a.attempt, a.failure_class, a.tokens) for a in stored] == [
        ("cheap", 1, "syntax", 12),
        ("cheap", 2, "", None),
    ]
    assert not RequestAttempt.objects.filter(live_query__external_id="without").exists()


def test_one_bad_row_in_a_list_gets_the_full_views_field_errors_and_stores_nothing(token):
    rows = [BODY | {"external_id": "good"}, BODY | {"external_id": "bad", "question": ""}]
    response = post(query_ingest, token, rows)
    assert response.status_code == 400
    assert json.loads(response.content)["errors"] == {"items": {"1": {"question": ["This field may not be blank."]}}}
    assert not LiveQuery.objects.exists()
