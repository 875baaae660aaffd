"""An admin issues an API token: the plaintext is shown once, on the page, and never put in a cookie."""

import re

import pytest
from django.contrib.messages.storage.cookie import CookieStorage
from django.http import HttpRequest
from django.urls import reverse

from triage.models import ApiToken
from triage.tokens import hash_token

pytestmark = pytest.mark.django_db
PLAINTEXT = re.compile(r"dkt_[0-9a-f]{8}_[\w-]{20,}")


@pytest.fixture
def staff_admin(client, role_users):
    """The admin role's user, as staff: the Django admin is where tokens are issued."""
    role_users["admin"].is_staff = True
    role_users["admin"].save(update_fields=["is_staff"])
    client.force_login(role_users["admin"])
    return client


def cookie_texts(cookies) -> list[str]:
    """Every cookie's value as text, the messages cookie decoded (it is signed and compressed)."""
    texts = []
    for name, morsel in cookies.items():
        texts.append(morsel.value)
        if name == CookieStorage.cookie_name and morsel.value:
            texts.extend(str(message) for message in CookieStorage(HttpRequest())._decode(morsel.value) or [])
    return texts


def test_a_new_token_is_shown_once_on_the_page_and_is_in_no_cookie(staff_admin):
    client = staff_admin
    response = client.post(
        reverse("admin:triage_apitoken_add"), {"client": "acme", "name": "ci", "scopes": '["ingest", "read"]'}
    )
    token = ApiToken.objects.get(client="acme")
    shown = PLAINTEXT.findall(response.content.decode())
    assert response.status_code == 200 and len(set(shown)) == 1, "the page answering the POST shows the token"
    assert hash_token(shown[0]) == token.token_hash
    assert "no-store" in response["Cache-Control"]
    for text in cookie_texts(response.cookies) + cookie_texts(client.cookies):
        assert shown[0] not in text
        assert token.token_hash not in text
    # Nothing holds it for a later page either.
    listing = client.get(reverse("admin:triage_apitoken_changelist"))
    assert shown[0] not in listing.content.decode()
    assert all(shown[0] not in text for text in cookie_texts(listing.cookies) + cookie_texts(client.cookies))
    assert shown[0] not in str(dict(client.session))


def test_the_issued_token_authenticates_against_the_api(staff_admin):
    client = staff_admin
    response = client.post(reverse("admin:triage_apitoken_add"), {"client": "acme", "scopes": '["read"]'})
    plaintext = PLAINTEXT.search(response.content.decode()).group(0)
    client.logout()
    status = client.get("/api/v1/queries/1", HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert status.status_code == 404  # authenticated; the id simply names no query of this client
