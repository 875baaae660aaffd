"""Warehouse DSNs: read from the environment or the owner-only secrets file, never the database."""

import json
import os
import stat

import pytest

from probes.models import Warehouse
from probes.warehouses import WarehouseUnavailable, warehouse_dsn, warehouse_register


def test_the_dsn_comes_from_the_environment_first(db, monkeypatch, settings, tmp_path):

    settings.WAREHOUSES_FILE.write_text(json.dumps({"my-wh": "sqlite:////from/file.sqlite3"}))
    warehouse = Warehouse.objects.create(name="my-wh", dialect="sqlite")
    assert warehouse_dsn(warehouse) == "sqlite:////from/file.sqlite3"
    monkeypatch.setenv("WAREHOUSE_MY_WH_URL", "sqlite:////from/env.sqlite3")
    assert warehouse_dsn(warehouse) == "sqlite:////from/env.sqlite3"


def test_registering_with_a_dsn_writes_the_secrets_file_never_the_database(db, settings):
    secret = "postgresql://reader:s3cret-pw@db.internal:5432/wh"
    warehouse = warehouse_register(name="sales", dialect="postgres", dsn=secret, description="Sales")
    stored = json.dumps(list(Warehouse.objects.filter(pk=warehouse.pk).values()), default=str)
    assert "s3cret" not in stored
    assert json.loads(settings.WAREHOUSES_FILE.read_text()) == {"sales": secret}
    assert settings.WAREHOUSES_FILE.stat().st_mode & 0o777 == 0o600


def test_registering_refuses_a_dsn_of_the_wrong_dialect(db):

    with pytest.raises(WarehouseUnavailable, match="needs a sqlite:// DSN"):
        warehouse_register(name="x", dialect="sqlite", dsn="postgresql://a@b/c")
    assert not Warehouse.objects.filter(name="x").exists()


# --- the secrets file --------------------------------------------------------------------


def test_the_secrets_file_is_owner_only_even_under_a_permissive_umask_and_an_open_old_file(db, settings):
    settings.WAREHOUSES_FILE.write_text(json.dumps({"old": "sqlite:////old.sqlite3"}))
    settings.WAREHOUSES_FILE.chmod(0o644)
    previous = os.umask(0)
    try:
        warehouse_register(name="sales", dialect="sqlite", dsn="sqlite:////tmp/sales.sqlite3")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(settings.WAREHOUSES_FILE.stat().st_mode) == 0o600
    assert json.loads(settings.WAREHOUSES_FILE.read_text()) == {
        "old": "sqlite:////old.sqlite3",
        "sales": "sqlite:////tmp/sales.sqlite3",
    }
    assert [p.name for p in settings.WAREHOUSES_FILE.parent.iterdir() if p.name.endswith(".tmp")] == []
