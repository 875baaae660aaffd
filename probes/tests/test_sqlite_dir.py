"""register_warehouses --sqlite-dir: each SQLite file of a benchmark's folder becomes a read-only warehouse."""

import sqlite3

import pytest
from django.core.management import CommandError, call_command

from probes.models import Warehouse
from probes.selectors import catalogue_get_latest
from probes.warehouses import open_sqlite_readonly, warehouse_dsn

pytestmark = pytest.mark.django_db


def make_db(path, table):
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute(f"INSERT INTO {table} VALUES (1, 'a')")
    conn.commit()
    conn.close()


@pytest.fixture
def benchmark(tmp_path, settings):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    root = tmp_path / "database"
    make_db(root / "concert_singer" / "concert_singer.sqlite", "singer")
    make_db(root / "car_1" / "car_1.sqlite", "cars")
    (root / "car_1" / "notes.db").write_text("not a database")
    return root


def test_each_file_becomes_a_read_only_warehouse_named_after_it_with_its_catalogue(benchmark, capsys):
    call_command("register_warehouses", "--sqlite-dir", str(benchmark))
    out, err = capsys.readouterr()
    assert sorted(Warehouse.objects.values_list("name", flat=True)) == ["car_1", "concert_singer"]
    assert "skipped" in err and "notes.db: not a SQLite database" in err
    singer = Warehouse.objects.get(name="concert_singer")
    assert "singer" in catalogue_get_latest(warehouse_id=singer.pk).snapshot["tables"]
    dsn = warehouse_dsn(singer)
    assert dsn.endswith("?immutable=1")
    conn = open_sqlite_readonly(dsn)
    assert conn.execute("SELECT name FROM singer").fetchone() == ("a",)
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("INSERT INTO singer VALUES (2, 'b')")


def test_two_files_with_one_name_are_refused(benchmark):
    make_db(benchmark / "other" / "car_1.sqlite", "cars")
    with pytest.raises(CommandError, match="several files would be one warehouse"):
        call_command("register_warehouses", "--sqlite-dir", str(benchmark))
    assert not Warehouse.objects.exists()
