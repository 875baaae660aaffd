"""seed_demo loads everything the demo needs and can run again without harm."""

import json

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from config.management.commands.seed_demo import DEMO_USERS
from config.roles import user_roles
from probes.models import Warehouse


@pytest.fixture
def isolated_var(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    return tmp_path


@pytest.mark.django_db
def test_seed_demo_creates_one_user_per_role_and_the_demo_warehouse(isolated_var, capsys, monkeypatch):
    monkeypatch.setenv("DOCKET_DEMO_PASSWORD", "demo-pass-123")
    call_command("seed_demo")
    out = capsys.readouterr().out
    assert "demo-pass-123" in out
    for role, username in DEMO_USERS.items():
        user = get_user_model().objects.get(username=username)
        assert role in user_roles(user)
        assert user.check_password("demo-pass-123")
    warehouse = Warehouse.objects.get(name="demo")
    assert warehouse.dialect == "sqlite"
    assert "demo" in json.loads(settings.WAREHOUSES_FILE.read_text())


@pytest.mark.django_db
def test_seed_demo_is_idempotent(isolated_var, monkeypatch):
    monkeypatch.setenv("DOCKET_DEMO_PASSWORD", "demo-pass-123")
    call_command("seed_demo", quiet_logins=True)
    call_command("seed_demo", quiet_logins=True)
    assert get_user_model().objects.filter(username__startswith="demo-").count() == len(DEMO_USERS)
    assert Warehouse.objects.filter(name="demo").count() == 1
