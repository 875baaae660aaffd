"""Item metadata on import, fields named when ignored, --strict, and warehouses picked by a metadata key."""

import csv
import io
import json

import pytest

from labelling.goldset_io import goldset_export_records, goldset_import
from labelling.goldset_parser import ParseOptions
from labelling.goldset_records import GoldImportError
from labelling.models import Label, Query
from probes.warehouses import warehouse_register

pytestmark = pytest.mark.django_db


def write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)
    return path


HEADER = ["id", "question", "sql", "label", "error_type", "db_id", "difficulty"]
ROWS = [["1", "q one", "SELECT 1", "0", "syntax", "shop", "simple"], ["2", "q two", "SELECT 2", "1", "", "zoo", "hard"]]


def test_a_jsonl_metadata_object_is_kept_and_an_unknown_field_is_named(tmp_path):
    path = tmp_path / "g.jsonl"
    record = {"id": "1", "question": "q", "sql": "SELECT 1", "label": "wrong", "error_type": "syntax",
              "metadata": {"db_id": "shop", "difficulty": "hard", "tags": ["join"]}}  # fmt: skip
    path.write_text(json.dumps(record) + "\n")
    version = goldset_import(path_or_file=path, gold_set_name="meta")
    assert Query.objects.get(external_id="1").metadata == {"db_id": "shop", "difficulty": "hard", "tags": ["join"]}
    summary = version.import_summary
    assert summary.fields_kept_as_metadata == ["metadata"] and summary.fields_ignored == ["error_type"]
    assert summary.unclassified_wrong == 1
    said = summary.describe()
    assert "Ignored fields: error_type" in said and "1 wrong label without an error class (unclassified)" in said
    assert next(goldset_export_records(version=version))["metadata"]["difficulty"] == "hard"


def test_csv_metadata_columns_are_kept_and_the_rest_reported_as_ignored(tmp_path):
    path = write_csv(tmp_path / "g.csv", HEADER, ROWS)
    version = goldset_import(
        path_or_file=path, gold_set_name="meta", options=ParseOptions(metadata_columns=("db_id", "difficulty"))
    )
    assert Query.objects.get(external_id="2").metadata == {"db_id": "zoo", "difficulty": "hard"}
    assert version.import_summary.fields_kept_as_metadata == ["db_id", "difficulty"]
    assert version.import_summary.fields_ignored == ["error_type"]


def test_keep_unknown_columns_keeps_every_field_docket_does_not_know(tmp_path):
    path = write_csv(tmp_path / "g.csv", HEADER, ROWS)
    goldset_import(path_or_file=path, gold_set_name="meta", options=ParseOptions(keep_unknown=True))
    kept = {"error_type": "syntax", "db_id": "shop", "difficulty": "simple"}
    assert Query.objects.get(external_id="1").metadata == kept


def test_strict_refuses_an_unknown_field_by_name_and_imports_nothing(tmp_path):
    path = write_csv(tmp_path / "g.csv", HEADER, ROWS)
    with pytest.raises(GoldImportError, match="unknown field 'error_type'"):
        goldset_import(path_or_file=path, gold_set_name="meta",
                       options=ParseOptions(metadata_columns=("db_id", "difficulty"), strict=True))  # fmt: skip
    assert not Query.objects.exists() and not Label.objects.exists()


def test_a_metadata_column_missing_from_the_header_is_refused(tmp_path):
    path = write_csv(tmp_path / "g.csv", HEADER, ROWS)
    with pytest.raises(GoldImportError, match="'evidence', not in the header"):
        goldset_import(path_or_file=path, gold_set_name="meta", options=ParseOptions(metadata_columns=("evidence",)))


def test_re_importing_new_metadata_updates_items_without_publishing(tmp_path):
    path = write_csv(tmp_path / "g.csv", HEADER, ROWS)
    first = goldset_import(path_or_file=path, gold_set_name="meta")
    again = goldset_import(path_or_file=path, gold_set_name="meta", options=ParseOptions(metadata_columns=("db_id",)))
    assert not again.published_now and again.pk == first.pk and again.import_summary.metadata_updated == 2
    assert Query.objects.get(external_id="1").metadata == {"db_id": "shop"}


def test_warehouse_from_picks_each_items_warehouse_by_a_metadata_key(tmp_path, settings):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    for name in ("shop", "zoo"):
        warehouse_register(name=name, dialect="sqlite")
    path = write_csv(tmp_path / "g.csv", HEADER, ROWS)
    goldset_import(path_or_file=path, gold_set_name="meta", options=ParseOptions(warehouse_from="db_id"))
    assert dict(Query.objects.values_list("external_id", "warehouse__name")) == {"1": "shop", "2": "zoo"}
    assert Query.objects.get(external_id="1").metadata == {"db_id": "shop"}
    missing = write_csv(tmp_path / "h.csv", HEADER, [["3", "q", "SELECT 3", "1", "", "mars", ""]])
    with pytest.raises(GoldImportError, match="unknown warehouse 'mars'"):
        goldset_import(path_or_file=missing, gold_set_name="meta2", options=ParseOptions(warehouse_from="db_id"))


def test_the_import_page_takes_a_taxonomy_and_metadata_and_the_version_page_filters_by_it(client_for):
    gold = io.BytesIO(
        b"id,question,sql,label,error_class,difficulty\n"
        b"1,q1,SELECT 1,wrong,Table Mismatch;Join Order,hard\n2,q2,SELECT 2,correct,,easy\n"
    )
    gold.name = "gold.csv"
    taxonomy = io.BytesIO(b"class,category,description\nTable Mismatch,Schema,\nJoin Order,Join,\n")
    taxonomy.name = "taxonomy.csv"
    client = client_for("ml_engineer")
    response = client.post(
        "/labelling/import/",
        {"file": gold, "gold_set": "web", "taxonomy": taxonomy, "metadata_columns": "difficulty"},
    )
    assert response.status_code == 302
    assert Query.objects.get(external_id="1").metadata == {"difficulty": "hard"}
    page = client.get("/labelling/goldsets/web/v1/", {"meta_key": "difficulty", "meta_value": "hard"}).content.decode()
    # An item's question in its row (a bare "q2" may be inside the page's CSRF token).
    assert "<div>q1</div>" in page and "<div>q2</div>" not in page and '<option value="difficulty" selected>' in page
    by_class = client.get("/labelling/goldsets/web/v1/", {"error_class": "Join Order"}).content.decode()
    assert "<div>q1</div>" in by_class and "<div>q2</div>" not in by_class
