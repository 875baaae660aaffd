"""A malformed secrets file (WAREHOUSES_FILE) is a clear, named error, never a crash (issue 26, item 7)."""

import json
import re

import pytest

from probes.execution import run_readonly
from probes.models import Warehouse
from probes.warehouses import WarehouseUnavailable, warehouse_dsn, warehouse_register

pytestmark = pytest.mark.django_db

MALFORMED = {
    "not JSON": (b'{"shop": "sqlite:////x.sqlite3",', "is not valid JSON (line 1, column"),
    "not an object": (b'["sqlite:////x.sqlite3"]', "must hold a JSON object"),
    "not UTF-8": (b'{"shop": "sqlite:////\xff.sqlite3"}', "is not UTF-8 text"),
}


@pytest.mark.parametrize("content, message", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_secrets_file_is_a_warehouse_unavailable_that_names_the_file(settings, content, message):
    settings.WAREHOUSES_FILE.write_bytes(content)
    with pytest.raises(WarehouseUnavailable, match=re.escape(message)) as caught:
        warehouse_dsn("shop")
    assert str(settings.WAREHOUSES_FILE) in str(caught.value)
    assert "x.sqlite3" not in str(caught.value)  # the message never quotes the secrets


def test_a_secrets_file_that_cannot_be_read_is_named(settings):
    settings.WAREHOUSES_FILE.mkdir()  # a directory where the file should be
    with pytest.raises(WarehouseUnavailable, match="cannot be read"):
        warehouse_dsn("shop")


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_running_on_a_warehouse_with_a_malformed_secrets_file_is_a_transport_error(settings, dialect):
    settings.WAREHOUSES_FILE.write_text("{not json")
    warehouse = Warehouse.objects.create(name="shop", dialect=dialect)
    result = run_readonly(warehouse=warehouse, sql="SELECT 1")
    assert result.error_code == "transport" and "is not valid JSON" in result.error


def test_registering_a_dsn_into_a_malformed_secrets_file_refuses_and_keeps_the_file(settings):
    settings.WAREHOUSES_FILE.write_text("{not json")
    with pytest.raises(WarehouseUnavailable, match="is not valid JSON"):
        warehouse_register(name="shop", dialect="sqlite", dsn="sqlite:////tmp/shop.sqlite3")
    assert settings.WAREHOUSES_FILE.read_text() == "{not json"
    assert not Warehouse.objects.filter(name="shop").exists()


def test_a_well_formed_file_still_gives_its_dsn(settings):
    settings.WAREHOUSES_FILE.write_text(json.dumps({"shop": "sqlite:////x.sqlite3"}))
    assert warehouse_dsn("shop") == "sqlite:////x.sqlite3"
