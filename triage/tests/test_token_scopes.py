"""A token needs at least one scope, and does only what its scopes list (no scope is no scope)."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from triage.models import ApiToken
from triage.tokens import api_token_issue, hash_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, role_users):
    admin = role_users["admin"]
    admin.is_staff = True
    admin.save()
    client.force_login(admin)
    return client


def bearer(plaintext: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}


def test_a_stored_token_without_scopes_may_do_nothing(client):
    _, plaintext = api_token_issue(client="legacy", scopes=["read"])
    ApiToken.objects.update(scopes=[])  # as a token saved before scopes were required
    posted = client.post(
        reverse("triage_api:query-ingest"),
        {"external_id": "x", "question": "q", "sql": "SELECT 1", "warehouse": "demo"},
        content_type="application/json",
        **bearer(plaintext),
    )
    assert posted.status_code == 403
    assert client.get(reverse("triage_api:query-status", args=[1]), **bearer(plaintext)).status_code == 403


def test_a_token_whose_scopes_are_a_string_is_not_read_letter_by_letter(client):
    _, plaintext = api_token_issue(client="stringy", scopes=["ingest"])
    ApiToken.objects.update(scopes="already")  # "read" is a substring of it
    assert client.get(reverse("triage_api:query-status", args=[1]), **bearer(plaintext)).status_code == 403


@pytest.mark.parametrize("scopes", [[], "ingest", ["ingest", "write"], [1]])
def test_issuing_refuses_anything_but_a_non_empty_list_of_known_scopes(scopes):
    with pytest.raises(ValidationError):
        api_token_issue(client="acme", scopes=scopes)
    assert not ApiToken.objects.exists()


def test_the_command_needs_a_scope():
    with pytest.raises(CommandError, match="at least one --scope"):
        call_command("issue_api_token", "acme")
    with pytest.raises(CommandError, match="Unknown scopes"):
        call_command("issue_api_token", "acme", "--scope", "admin")
    assert not ApiToken.objects.exists()


def test_the_admin_offers_the_scopes_as_checkboxes(admin_client):
    page = admin_client.get(reverse("admin:triage_apitoken_add")).content.decode()
    assert 'type="checkbox" name="scopes" value="ingest"' in page
    assert 'type="checkbox" name="scopes" value="read"' in page


def test_the_admin_issues_a_token_with_the_scopes_ticked(admin_client):
    response = admin_client.post(reverse("admin:triage_apitoken_add"), {"client": "acme", "scopes": ["read"]})
    plaintext = re.search(r"dkt_[0-9a-f]{8}_[\w-]+", response.content.decode()).group(0)
    assert ApiToken.objects.get(token_hash=hash_token(plaintext)).scopes == ["read"]


@pytest.mark.parametrize("scopes", ["", "ingest, read", '["ingest", "admin"]', "[not json"])
def test_the_admin_answers_bad_scopes_with_a_form_error_not_a_500(admin_client, scopes):
    response = admin_client.post(reverse("admin:triage_apitoken_add"), {"client": "acme", "scopes": scopes})
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_an_issued_tokens_page_still_opens(admin_client):
    token, _ = api_token_issue(client="acme", scopes=["ingest"])
    response = admin_client.get(reverse("admin:triage_apitoken_change", args=[token.pk]))
    assert response.status_code == 200 and "ingest" in response.content.decode()
