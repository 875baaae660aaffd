"""Login throttling (django-axes): a username from one address is paused after repeated failures."""

import pytest
from django.test import RequestFactory
from django.urls import reverse

from config.throttling import client_ip

pytestmark = pytest.mark.django_db


def log_in(client, username, password, address="203.0.113.7"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def test_five_failed_logins_lock_the_username_from_that_address_even_with_the_right_password(client, role_users):
    for _ in range(4):
        assert log_in(client, "analyst-user", "wrong").status_code == 200
    assert log_in(client, "analyst-user", "wrong").status_code == 429, "the fifth failure locks"
    locked = log_in(client, "analyst-user", "pw-for-tests")
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_lock_holds_only_that_username_from_that_address(client, role_users):
    for _ in range(5):
        log_in(client, "analyst-user", "wrong")
    assert log_in(client, "labeller-user", "pw-for-tests").status_code == 302, "another user logs in"
    client.logout()
    assert log_in(client, "analyst-user", "pw-for-tests", address="198.51.100.2").status_code == 302


def test_a_success_before_the_limit_resets_the_count(client, role_users):
    for _ in range(4):
        log_in(client, "analyst-user", "wrong")
    assert log_in(client, "analyst-user", "pw-for-tests").status_code == 302
    client.logout()
    for _ in range(4):
        log_in(client, "analyst-user", "wrong")
    assert log_in(client, "analyst-user", "pw-for-tests").status_code == 302


def test_behind_proxies_the_client_is_read_from_the_right_of_x_forwarded_for(settings):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7, 10.0.0.1")
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_ip(request) == "10.0.0.2", "no proxy trusted: the header is the client's own claim"
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_ip(request) == "203.0.113.7", "the leftmost entry is whatever the client sent"
