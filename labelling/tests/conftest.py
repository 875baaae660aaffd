"""The demo warehouse (SQLite, built once per session) registered for labelling tests."""

import pytest

from labelling.demo import DEMO_GOLD_FILE
from labelling.goldset_io import goldset_import
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import DEMO_WAREHOUSE_NAME, build_demo_warehouse
from probes.warehouses import dsn_env_var, warehouse_register


@pytest.fixture(scope="session")
def demo_warehouse_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("labelling-demo") / "demo.sqlite3"
    build_demo_warehouse(path)
    return path


@pytest.fixture
def demo_sqlite_warehouse(db, demo_warehouse_path, monkeypatch, settings, tmp_path):
    """The demo warehouse registered as `demo` with a catalogue; its DSN only in the environment."""
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    monkeypatch.setenv(dsn_env_var(DEMO_WAREHOUSE_NAME), f"sqlite:///{demo_warehouse_path.resolve()}")
    warehouse = warehouse_register(name=DEMO_WAREHOUSE_NAME, dialect="sqlite")
    catalogue_refresh(warehouse=warehouse)
    return warehouse


@pytest.fixture
def demo_gold_version(demo_sqlite_warehouse):
    """The committed demo gold set imported over the demo warehouse: its published v1."""
    return goldset_import(path_or_file=DEMO_GOLD_FILE, gold_set_name="demo", fmt="jsonl")
