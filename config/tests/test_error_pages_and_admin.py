"""Error pages with navigation and a reason, the favicon, and the admin's read-only records (#21 defects 4, 9, 10)."""

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from judges.tests.calibration_builders import labels, make_gold_set

pytestmark = pytest.mark.django_db
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}


def test_a_403_page_names_the_role_it_needs_and_keeps_the_navigation(client_for):
    response = client_for("labeller").get(reverse("triage:index"), **HTML)
    assert response.status_code == 403
    html = response.content.decode()
    assert 'nav aria-label="Main"' in html
    assert "This page needs the role analyst." in html
    assert "with the role labeller" in html


def test_a_404_page_keeps_the_navigation_and_says_what_was_missing(client_for):
    response = client_for("ml_engineer").get("/judges/999999/", **HTML)
    assert response.status_code == 404
    html = response.content.decode()
    assert 'nav aria-label="Main"' in html and 'id="error-reason"' in html


def test_a_post_only_address_opened_in_a_browser_gets_a_page_that_says_so(client_for):
    response = client_for("analyst").get(reverse("triage:claim_next"), **HTML)
    assert response.status_code == 405
    html = response.content.decode()
    assert 'nav aria-label="Main"' in html
    assert "accepts POST only" in html


def test_an_api_client_still_gets_a_bare_405(client_for):
    response = client_for("analyst").get(reverse("triage:claim_next"), HTTP_ACCEPT="application/json")
    assert response.status_code == 405 and response.content == b""


def test_every_page_names_a_favicon_that_exists(client_for):
    html = client_for("labeller").get("/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg"' in html
    assert finders.find("favicon.svg")


@pytest.fixture
def staff_admin(client, role_users):
    """The admin role's user, as staff (and so with the admin group's model permissions)."""
    role_users["admin"].is_staff = True
    role_users["admin"].is_superuser = True
    role_users["admin"].save(update_fields=["is_staff", "is_superuser"])
    client.force_login(role_users["admin"])
    return client


@pytest.mark.parametrize(
    "model",
    [
        "labelling/goldsetversion",
        "labelling/goldsetversionitem",
        "labelling/label",
        "labelling/adjudication",
        "judges/judgeversion",
        "judges/verdict",
        "triage/resolutionevent",
        "triage/estimatesnapshot",
    ],
)
def test_the_admin_cannot_add_frozen_versions_or_audit_records(staff_admin, model):
    client = staff_admin
    assert client.get(f"/admin/{model}/add/").status_code == 403
    changelist = client.get(f"/admin/{model}/").content.decode()
    assert f'href="/admin/{model}/add/"' not in changelist


def test_a_published_version_opens_read_only_in_the_admin(staff_admin):
    version = make_gold_set("frozen", labels(1, 1))
    html = staff_admin.get(f"/admin/labelling/goldsetversion/{version.pk}/change/").content.decode()
    assert 'name="_save"' not in html and 'class="deletelink"' not in html


def test_the_admin_spells_live_queries(staff_admin):
    html = staff_admin.get("/admin/").content.decode()
    assert "Live queries" in html and "Live querys" not in html
