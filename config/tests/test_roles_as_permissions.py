"""Roles are groups of Django permissions: an admin made through the admin site reaches the
token and policy pages, every page checks a permission, and the admin role makes staff."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from config.roles import ADMIN, ALL_ROLES, ROLE_PERMISSIONS, ensure_role_groups
from config.tests.test_permissions import PUBLIC_PREFIXES, iter_patterns
from tests.support.access import admitted, denied

pytestmark = pytest.mark.django_db
PASSWORD = "a-Long-pw-for-the-new-admin-42"
# Pages every signed-in user may open: they show only what the user's permissions allow.
OPEN_TO_EVERY_USER = ("", "accounts/logout/")


def sign_in(client, username, password):
    """Sign in through the login page, as a person does (django-axes watches it)."""
    response = client.post(reverse("login"), {"username": username, "password": password})
    assert response.status_code == 302 and not response["Location"].startswith(reverse("login")), response.status_code


def test_an_admin_made_through_the_admin_site_reaches_tokens_and_policies(client, django_user_model):
    ensure_role_groups()
    django_user_model.objects.create_superuser("root", password="root-pw-for-tests")
    sign_in(client, "root", "root-pw-for-tests")
    added = client.post(
        "/admin/auth/user/add/",
        {"username": "new-admin", "password1": PASSWORD, "password2": PASSWORD, "usable_password": "true"},
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    user = django_user_model.objects.get(username="new-admin")
    assert not user.is_staff
    changed = client.post(
        f"/admin/auth/user/{user.pk}/change/",
        {
            "username": "new-admin",
            "is_active": "on",
            "groups": [Group.objects.get(name=ADMIN).pk],
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2026-01-01",
            "initial-date_joined_1": "00:00:00",
        },
    )
    assert changed.status_code == 302, changed.content.decode()[:2000]
    user.refresh_from_db()
    assert user.is_staff and not user.is_superuser
    client.logout()
    sign_in(client, "new-admin", PASSWORD)
    for url in ("/admin/", "/admin/triage/apitoken/", "/admin/triage/apitoken/add/", "/admin/triage/triagepolicy/"):
        response = client.get(url)
        assert response.status_code == 200, f"{url}: {response.status_code} {response.get('Location')}"
    assert client.get("/admin/triage/triagepolicy/add/").status_code == 200


def test_granting_and_taking_the_admin_role_sets_staff_both_ways(django_user_model):
    ensure_role_groups()
    admin_group = Group.objects.get(name=ADMIN)
    one = django_user_model.objects.create_user("one")
    two = django_user_model.objects.create_user("two")
    one.groups.add(admin_group)
    admin_group.user_set.add(two)
    assert one.is_staff
    assert django_user_model.objects.filter(username__in=["one", "two"], is_staff=True).count() == 2
    one.groups.remove(admin_group)
    admin_group.user_set.clear()
    assert django_user_model.objects.filter(username__in=["one", "two"], is_staff=True).count() == 0
    one.groups.set([Group.objects.get(name="analyst")])
    one.refresh_from_db()
    assert not one.is_staff


def test_each_role_holds_exactly_its_permissions():
    ensure_role_groups()
    for role in ALL_ROLES:
        held = {f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name=role).permissions.all()}
        if role == ADMIN:
            assert set().union(*ROLE_PERMISSIONS.values()) <= held
        else:
            assert held == set(ROLE_PERMISSIONS[role]), role


def test_every_page_refuses_a_signed_in_user_without_permissions(client, role_users):
    """A page that forgot its permission would answer the outsider (no group) with 200."""
    client.force_login(role_users["outsider"])
    checked = 0
    for route, _pattern in iter_patterns():
        if route.startswith(PUBLIC_PREFIXES) or route in OPEN_TO_EVERY_USER or "<" in route or "(?P" in route:
            continue
        response = client.get("/" + route)
        assert response.status_code in (403, 405), f"/{route} answered {response.status_code} to a user with no role"
        checked += 1
    assert checked >= 10


def test_a_login_redirect_counts_as_denial(client):
    response = client.get(reverse("triage:index"))
    assert denied(response) and not admitted(response)
