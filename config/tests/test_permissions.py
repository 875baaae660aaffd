"""Every page requires login, and each page admits exactly the roles it names."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

# (url name, roles that may open it). Admin passes every role check.
PAGE_ROLES = [
    # Home only lists what the role may do; a user with no role sees "ask an admin".
    ("home", {"labeller", "analyst", "ml_engineer", "admin", "outsider"}),
    ("labelling:index", {"labeller", "ml_engineer", "admin"}),
    ("judges:index", {"ml_engineer", "admin"}),
    ("probes:index", {"ml_engineer", "admin"}),
    ("triage:index", {"analyst", "admin"}),
]
# `api/` and `v1/` (OTLP) authenticate API tokens, not sessions.
PUBLIC_PREFIXES = ("accounts/login", "health", "admin/", "static/", "api/", "v1/")
ALL_USERS = ["labeller", "analyst", "ml_engineer", "admin", "outsider"]


def iter_patterns(resolver=None, prefix=""):
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from iter_patterns(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


@pytest.mark.django_db
@pytest.mark.parametrize("name", [name for name, _ in PAGE_ROLES])
def test_anonymous_visitor_is_sent_to_login(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "allowed"), PAGE_ROLES)
@pytest.mark.parametrize("who", ALL_USERS)
def test_page_admits_only_its_roles(client, role_users, name, allowed, who):
    client.force_login(role_users[who])
    response = client.get(reverse(name))
    expected = 200 if who in allowed else 403
    assert response.status_code == expected, f"{who} on {name}"


@pytest.mark.django_db
def test_every_parameterless_page_requires_login(client):
    """Guard against a new view that forgets the login requirement."""
    checked = 0
    for route, _pattern in iter_patterns():
        if route.startswith(PUBLIC_PREFIXES) or "<" in route or "(?P" in route:
            continue
        response = client.get("/" + route)
        assert response.status_code in (302, 405), f"/{route} answered {response.status_code} to an anonymous visitor"
        if response.status_code == 302:
            assert reverse("login") in response["Location"], route
        checked += 1
    assert checked >= len(PAGE_ROLES)


@pytest.mark.django_db
def test_navigation_shows_only_what_the_role_may_do(client, role_users):
    client.force_login(role_users["labeller"])
    html = client.get(reverse("home")).content.decode()
    assert reverse("labelling:index") in html
    assert reverse("triage:index") not in html
    assert reverse("judges:index") not in html


@pytest.mark.django_db
def test_django_admin_is_for_admins_only(client, role_users):
    role_users["admin"].is_staff = True
    role_users["admin"].save()
    client.force_login(role_users["ml_engineer"])
    assert client.get("/admin/").status_code == 302
    client.force_login(role_users["admin"])
    assert client.get("/admin/").status_code == 200
