"""Who may open each triage page and call each API endpoint (tokens and scopes included)."""

import json

import pytest
from django.urls import reverse

from tests.support.access import admitted
from triage.tests import factories
from triage.tokens import api_token_revoke

pytestmark = pytest.mark.django_db
ALL_USERS = ["labeller", "analyst", "ml_engineer", "admin", "outsider"]
ANALYSTS = {"analyst", "admin"}


@pytest.fixture
def item():
    return factories.triage_item()


def pages(item):
    """(url, roles admitted) for every GET page of the triage app."""
    return [
        (reverse("triage:index"), ANALYSTS),
        (reverse("triage:item", args=[item.pk]), ANALYSTS),
        (reverse("triage:resolved"), ANALYSTS),
        (reverse("triage:unjudged"), ANALYSTS),
        (reverse("triage:dashboard"), ANALYSTS | {"ml_engineer"}),
        (reverse("triage:alerts"), ANALYSTS | {"ml_engineer"}),
    ]


def posts(item):
    """(url, roles admitted) for every POST action of the triage app."""
    return [
        (reverse("triage:claim_next"), ANALYSTS),
        (reverse("triage:decide", args=[item.pk]), ANALYSTS),
        (reverse("triage:release", args=[item.pk]), ANALYSTS),
        (reverse("triage:reopen", args=[item.pk]), {"admin"}),
        (reverse("triage:acknowledge_alert", args=[1]), {"admin"}),
        (reverse("triage:resolve_alert", args=[1]), {"admin"}),
        (reverse("triage:policy_preview"), {"admin"}),
    ]


def test_anonymous_visitors_are_sent_to_login(client, item):
    for url, _ in pages(item) + posts(item):
        response = client.post(url) if (url, _) in posts(item) else client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url


@pytest.mark.parametrize("who", ALL_USERS)
def test_each_page_admits_only_its_roles(client, role_users, item, who):
    client.force_login(role_users[who])
    for url, allowed in pages(item):
        assert client.get(url).status_code == (200 if who in allowed else 403), f"{who} on {url}"


@pytest.mark.parametrize("who", ALL_USERS)
def test_each_action_refuses_the_wrong_roles(client, role_users, item, who):
    client.force_login(role_users[who])
    for url, allowed in posts(item):
        response = client.post(url)
        if who in allowed:
            assert admitted(response), f"{who} on {url}: {response.status_code} {response.get('Location')}"
        else:
            assert response.status_code == 403, f"{who} on {url}: {response.status_code}"


@pytest.mark.parametrize("url_name", ["triage:claim_next", "triage:decide", "triage:reopen", "triage:release"])
def test_actions_reject_get(client_for, item, url_name):
    args = [] if url_name == "triage:claim_next" else [item.pk]
    assert client_for("admin").get(reverse(url_name, args=args)).status_code == 405


API_BODY = {"external_id": "x", "question": "q", "sql": "SELECT 1", "warehouse": "shop"}


def api_call(client, method, token):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    if method == "post":
        return client.post("/api/v1/queries", json.dumps(API_BODY), content_type="application/json", **headers)
    live = factories.live_query()
    live.client = "acme"
    live.save()
    return client.get(f"/api/v1/queries/{live.pk}", **headers)


@pytest.mark.parametrize(
    ("scopes", "method", "expected"),
    [
        (["ingest"], "post", 202),
        (["read"], "post", 403),
        (["ingest", "read"], "post", 202),
        (["read"], "get", 200),
        (["ingest"], "get", 403),
    ],
)
def test_api_token_scopes_decide_what_a_token_may_do(client, scopes, method, expected):
    factories.warehouse("shop")
    _, plaintext = factories.token(scopes=scopes)
    assert api_call(client, method, plaintext).status_code == expected


@pytest.mark.parametrize("method", ["post", "get"])
def test_api_refuses_missing_wrong_and_revoked_tokens(client, method):
    factories.warehouse("shop")
    token, plaintext = factories.token()
    assert api_call(client, method, None).status_code == 401
    assert api_call(client, method, plaintext + "x").status_code == 401
    api_token_revoke(token=token)
    assert api_call(client, method, plaintext).status_code == 401


def test_a_logged_in_session_is_not_an_api_credential(client_for):
    factories.warehouse("shop")
    response = client_for("admin").post("/api/v1/queries", json.dumps(API_BODY), content_type="application/json")
    assert response.status_code in (401, 403)


def test_schema_and_docs_are_public(client):
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200
