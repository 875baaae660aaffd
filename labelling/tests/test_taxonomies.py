"""Taxonomies as data: the default, a team's own from a file, classes created, renamed, retired, mapped."""

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from labelling.class_keys import class_keys, class_keys_for
from labelling.goldset_io import goldset_import
from labelling.goldset_parser import ParseOptions
from labelling.goldset_records import GoldImportError
from labelling.models import GoldSet, GoldSetVersionItem, Label
from labelling.services import label_create
from labelling.taxonomy import (
    TaxonomyIndex,
    goldset_taxonomy,
    taxonomy_alias_add,
    taxonomy_class_rename,
    taxonomy_class_retire,
    taxonomy_default,
    taxonomy_index,
)
from labelling.taxonomy_models import TaxonomyClass, TaxonomyVersion
from labelling.tests.factories import gold_set as make_gold_set
from labelling.tests.factories import query as make_query

pytestmark = pytest.mark.django_db

TAXONOMY = [
    {"class": "Aggregate Functions", "category": "Function", "description": "COUNT/SUM misuse"},
    {"class": "Date Functions", "category": "Function", "description": ""},
    {"class": "Table Mismatch", "category": "Schema Linking", "description": "a wrong table"},
    {"class": "Column Mismatch", "category": "Schema Linking"},
    {"class": "unknown_object", "maps_to": "Table Mismatch"},
]


def jsonl(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def item(n, label="wrong", error_class=None, **extra):
    return {"id": f"q{n}", "question": f"question {n}", "sql": f"SELECT {n}", "label": label,
            "error_class": error_class, **extra}  # fmt: skip


def test_the_default_taxonomy_is_dockets_list_seeded_by_the_migration():
    taxonomy = taxonomy_default()
    index = taxonomy_index(taxonomy)
    assert taxonomy.name == "docket" and taxonomy.version == 1
    assert index.active[:3] == ["unknown_object", "join_fanout", "misread_intent"] and len(index.active) == 10
    assert TaxonomyVersion.objects.filter(taxonomy=taxonomy, number=1).exists()


def test_an_unknown_class_is_refused_naming_the_allowed_ones(tmp_path):
    path = jsonl(tmp_path / "g.jsonl", [item(1, error_class="Aggregate Functions"), item(2, error_class="Bad One")])
    with pytest.raises(GoldImportError) as refused:
        goldset_import(path_or_file=path, gold_set_name="bird")
    message = str(refused.value)
    assert "'Aggregate Functions' (line 1)" in message and "'Bad One' (line 2)" in message
    assert "join_fanout" in message and "--taxonomy" in message and "--create-classes" in message
    assert not Label.objects.exists()


def test_a_taxonomy_file_becomes_the_gold_sets_taxonomy_exactly_and_without_dockets_defaults(tmp_path):
    taxonomy_file = tmp_path / "taxonomy.json"
    taxonomy_file.write_text(json.dumps(TAXONOMY))
    records = [item(1, error_class=["Aggregate Functions", "Table Mismatch"]), item(2, label="correct")]
    version = goldset_import(
        path_or_file=jsonl(tmp_path / "g.jsonl", records), gold_set_name="bird", taxonomy_file=taxonomy_file
    )
    index = taxonomy_index(goldset_taxonomy(GoldSet.objects.get(name="bird")))
    assert index.name == "bird"
    assert index.active == ["Aggregate Functions", "Date Functions", "Table Mismatch", "Column Mismatch"]
    assert index.category_of("Column Mismatch") == "Schema Linking"
    assert index.resolve("unknown_object") == "Table Mismatch" and index.resolve("join_fanout") is None
    wrong = GoldSetVersionItem.objects.get(version=version, decision="wrong")
    assert wrong.error_classes == ["Aggregate Functions", "Table Mismatch"]
    assert version.taxonomy_version.taxonomy.name == "bird" and version.taxonomy_version.number == 1


def test_a_taxonomy_csv_with_its_header_is_read_and_a_bad_header_refused(tmp_path):
    good = tmp_path / "t.csv"
    good.write_text("class,category,description\nA,Cat,first\nB,,second\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("name,group\nA,Cat\n")
    records = [item(1, error_class="A;B")]
    goldset_import(path_or_file=jsonl(tmp_path / "g.jsonl", records), gold_set_name="csvtax", taxonomy_file=good)
    assert taxonomy_index(goldset_taxonomy(GoldSet.objects.get(name="csvtax"))).active == ["A", "B"]
    with pytest.raises(GoldImportError, match="class,category,description"):
        goldset_import(path_or_file=jsonl(tmp_path / "h.jsonl", records), gold_set_name="other", taxonomy_file=bad)


def test_create_classes_adds_the_files_classes_to_a_taxonomy_of_the_gold_sets_own(tmp_path):
    records = [item(1, error_class="join_fanout"), item(2, error_class="Nested Query;Join Order")]
    goldset_import(path_or_file=jsonl(tmp_path / "g.jsonl", records), gold_set_name="mine",
                   options=_options(create_classes=True))  # fmt: skip
    index = taxonomy_index(goldset_taxonomy(GoldSet.objects.get(name="mine")))
    assert index.name == "mine" and set(index.active) == {"join_fanout", "Nested Query", "Join Order"}
    # The shared default did not grow.
    assert "Nested Query" not in taxonomy_index(taxonomy_default()).names


def test_several_classes_per_label_from_json_lists_semicolons_and_one_line_per_class(tmp_path):
    records = [
        item(1, error_class=["join_fanout", "missing_filter"]),
        item(2, error_class="dialect;syntax"),
        item(3, error_class="wrong_measure"),
        item(3, error_class="aggregation_grain"),
        item(3, error_class="join_fanout"),
    ]
    version = goldset_import(path_or_file=jsonl(tmp_path / "g.jsonl", records), gold_set_name="multi")
    classes = {i.query.external_id: i.error_classes for i in version.items.select_related("query")}
    assert classes == {
        "q1": ["join_fanout", "missing_filter"],
        "q2": ["dialect", "syntax"],
        "q3": ["aggregation_grain", "join_fanout", "wrong_measure"],
    }
    assert version.import_summary.classes_merged == 2
    # The same file again changes nothing: nothing is published, and the command says which version is current.
    again = goldset_import(path_or_file=jsonl(tmp_path / "g.jsonl", records), gold_set_name="multi")
    assert not again.published_now and again.pk == version.pk
    out = _call("import_gold", str(tmp_path / "g.jsonl"), "--gold-set", "multi")
    assert "Nothing changed" in out and "multi v1 is current" in out


def test_a_wrong_line_and_a_correct_line_of_one_item_still_contradict(tmp_path):
    records = [item(1, error_class="join_fanout"), item(1, label="correct")]
    with pytest.raises(GoldImportError, match="labelled twice"):
        goldset_import(path_or_file=jsonl(tmp_path / "g.jsonl", records), gold_set_name="clash")


def test_renaming_keeps_the_old_name_as_an_alias_and_the_labels_follow(tmp_path):
    gold_set = make_gold_set("ren")
    query = make_query(gold_set=gold_set)
    label_create(query=query, labeller=None, decision="wrong", error_class=["join_fanout", "syntax"])
    row = TaxonomyClass.objects.get(taxonomy=taxonomy_default(), name="join_fanout")
    taxonomy_class_rename(taxonomy_class=row, new_name="row_multiplication")
    index = taxonomy_index(taxonomy_default())
    assert index.resolve("join_fanout") == "row_multiplication" and index.version == 2
    assert Label.objects.get(query=query).error_classes == ["row_multiplication", "syntax"]
    # A file that says the old name still means the class.
    label = label_create(query=query, labeller=None, decision="wrong", error_class="join_fanout")
    assert label.error_class == "row_multiplication"


def test_a_retired_class_is_no_longer_offered_nor_accepted_but_is_never_deleted():
    gold_set = make_gold_set("ret")
    row = TaxonomyClass.objects.get(taxonomy=taxonomy_default(), name="dialect")
    taxonomy_class_retire(taxonomy_class=row)
    assert "dialect" not in [key.name for key in class_keys_for(gold_set)]
    with pytest.raises(ValidationError, match="not a class"):
        label_create(query=make_query(gold_set=gold_set), labeller=None, decision="wrong", error_class="dialect")
    assert TaxonomyClass.objects.filter(pk=row.pk).exists()


def test_a_checkers_class_is_mapped_with_maps_to():
    taxonomy = taxonomy_default()
    taxonomy_alias_add(taxonomy=taxonomy, name="missing_table", target=TaxonomyClass.objects.get(
        taxonomy=taxonomy, name="unknown_object"))  # fmt: skip
    assert taxonomy_index(taxonomy).resolve("missing_table") == "unknown_object"


def test_the_queue_keys_follow_the_taxonomy_two_digits_for_categories_when_there_are_many():
    classes = [
        {"id": n, "class": f"c{n}", "category": f"cat{n % 9}", "description": "", "retired": False} for n in range(31)
    ]
    keys = class_keys(_index(classes))
    assert len(keys) == 31 and len({key.key for key in keys}) == 31 and {len(key.key) for key in keys} == {2}
    by_name = {key.name: key.key for key in keys}
    # The category's digit, then the class's within it: c0 and c9 are cat0's first two, c1 is cat1's first.
    assert (by_name["c0"], by_name["c9"], by_name["c1"]) == ("11", "12", "21")
    flat = class_keys(_index([{**c, "category": ""} for c in classes]))
    assert [k.key for k in flat[:2]] == ["01", "02"]
    assert [k.key for k in class_keys(taxonomy_index(taxonomy_default()))][-1] == "0"


def test_the_queue_page_shows_the_gold_sets_classes_with_their_keys(client_for, tmp_path):
    taxonomy_file = tmp_path / "taxonomy.json"
    taxonomy_file.write_text(json.dumps(TAXONOMY))
    goldset_import(path_or_file=jsonl(tmp_path / "g.jsonl", [item(1, label="correct")]), gold_set_name="bird",
                   taxonomy_file=taxonomy_file)  # fmt: skip
    query = make_query(gold_set=GoldSet.objects.get(name="bird"))
    html = client_for("labeller").get(f"/labelling/queue/bird/item/{query.pk}/").content.decode()
    assert 'data-class-key="1"' in html and "Aggregate Functions" in html and "join_fanout" not in html
    response = client_for("labeller").post(
        f"/labelling/queue/bird/item/{query.pk}/label/",
        {"decision": "wrong", "error_class": ["Date Functions", "Column Mismatch"]},
    )
    assert response.status_code == 302
    assert Label.objects.get(query=query).error_classes == ["Column Mismatch", "Date Functions"]


def test_the_admins_taxonomy_page_adds_renames_and_retires(client_for):
    client = client_for("admin")
    assert client.get("/labelling/taxonomies/").status_code == 200
    client.post("/labelling/taxonomies/docket/classes/", {"name": "wrong_order", "category": "Sorting"})
    row = TaxonomyClass.objects.get(taxonomy__name="docket", name="wrong_order")
    client.post(f"/labelling/taxonomies/docket/classes/{row.pk}/rename/", {"name": "bad_sort"})
    client.post(f"/labelling/taxonomies/docket/classes/{row.pk}/retire/", {"retired": "1"})
    row.refresh_from_db()
    assert (row.name, row.category, row.retired) == ("bad_sort", "Sorting", True)
    assert taxonomy_index(taxonomy_default()).resolve("wrong_order") == "bad_sort"
    assert "bad_sort" in client.get("/labelling/taxonomies/docket/").content.decode()
    assert client_for("ml_engineer").get("/labelling/taxonomies/docket/").status_code in (302, 403)


def _index(classes):
    return TaxonomyIndex("t", 1, classes)


def _options(**kwargs):
    return ParseOptions(**kwargs)


def _call(*args):
    out = io.StringIO()
    try:
        call_command(*args, stdout=out)
    except CommandError as exc:
        return str(exc)
    return out.getvalue()
