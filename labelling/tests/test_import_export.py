import csv
import io
import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from labelling import demo, goldset_io, goldset_writer
from labelling.demo import DEMO_GOLD_FILE
from labelling.goldset_io import goldset_export, goldset_import
from labelling.goldset_records import GoldImportError
from labelling.models import GoldSet, Label, Query
from labelling.tasks import query_fingerprint_fill
from probes.fingerprint import sql_fingerprint
from probes.models import Warehouse

pytestmark = pytest.mark.django_db

GOOD = [
    {
        "id": "a1",
        "question": "How many orders?",
        "sql": "SELECT COUNT(*) FROM orders",
        "label": "correct",
        "error_class": None,
    },
    {
        "id": "a2",
        "question": "Revenue per region",
        "sql": "SELECT r.name, SUM(o.total)\nFROM orders o JOIN regions r",
        "label": "wrong",
        "error_class": "join_fanout",
        "warehouse": "demo",
        "labeller": None,
        "reference_sql": "SELECT 1",
    },
    {
        "id": "a3",
        "question": 'Naïve "quoted", question',
        "sql": "SELECT name FROM users",
        "label": "correct",
        "error_class": None,
        "labeller": "labeller-user",
    },
]


def write_jsonl(path, records, extra_lines=()):
    lines = [json.dumps(r, ensure_ascii=False) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_csv(path, records):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "question", "sql", "label", "error_class", "warehouse", "labeller", "reference_sql"])
        for r in records:
            writer.writerow(
                [
                    r.get(k) or ""
                    for k in ["id", "question", "sql", "label", "error_class", "warehouse", "labeller", "reference_sql"]
                ]
            )
    return path


@pytest.fixture
def demo_warehouse(db):
    return Warehouse.objects.create(name="demo", dialect="sqlite")


@pytest.fixture
def setup(role_users, demo_warehouse):
    return role_users


def test_import_creates_queries_labels_and_a_published_version(setup, tmp_path):
    version = goldset_import(path_or_file=write_jsonl(tmp_path / "g.jsonl", GOOD), gold_set_name="demo-gold")
    assert version.number == 1 and version.is_frozen
    assert version.items.count() == 3
    a2 = Query.objects.get(external_id="a2")
    assert a2.reference_sql == "SELECT 1" and a2.warehouse.name == "demo" and a2.fingerprint
    assert Label.objects.filter(source="import").count() == 3
    assert Label.objects.get(query__external_id="a3").labeller.username == "labeller-user"


def test_importing_again_extends_the_gold_set_and_publishes_the_next_version(setup, tmp_path):
    goldset_import(path_or_file=write_jsonl(tmp_path / "g.jsonl", GOOD[:2]), gold_set_name="demo-gold")
    changed = dict(GOOD[0], label="wrong", error_class="misread_intent")
    version = goldset_import(
        path_or_file=write_jsonl(tmp_path / "h.jsonl", [changed, GOOD[2]]), gold_set_name="demo-gold"
    )
    assert version.number == 2
    assert Query.objects.filter(gold_set__name="demo-gold").count() == 3
    assert version.items.get(query__external_id="a1").decision == "wrong"
    assert Label.objects.filter(query__external_id="a1").count() == 2  # the old one is history


def test_csv_imports_like_jsonl(setup, tmp_path):
    version = goldset_import(path_or_file=write_csv(tmp_path / "g.csv", GOOD), gold_set_name="from-csv")
    assert version.items.count() == 3
    assert Query.objects.get(external_id="a2").sql == GOOD[1]["sql"]


BAD_JSONL = [
    ("unknown-error-class", [dict(GOOD[1], error_class="made_up")], 2, "unknown error class 'made_up'"),
    ("missing-field", [{k: v for k, v in GOOD[0].items() if k != "sql"}], 2, "missing field 'sql'"),
    ("bad-label", [dict(GOOD[0], label="maybe")], 2, "label must be correct or wrong (or 1/0"),
    (
        "same-labeller-different-label",
        [dict(GOOD[0], label="wrong", error_class="syntax")],
        2,
        "id 'a1' labelled twice by the import (no labeller) with different labels (line 1)",
    ),
    ("unknown-warehouse", [dict(GOOD[0], id="z", warehouse="nowhere")], 2, "unknown warehouse 'nowhere'"),
    ("unknown-labeller", [dict(GOOD[0], id="z", labeller="nobody")], 2, "unknown labeller 'nobody'"),
]


@pytest.mark.parametrize(("case", "tail", "line", "reason"), BAD_JSONL, ids=[c[0] for c in BAD_JSONL])
def test_a_bad_line_stops_the_import_names_the_line_and_writes_nothing(setup, tmp_path, case, tail, line, reason):
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD[0], *tail, GOOD[2]])
    with pytest.raises(GoldImportError) as error:
        goldset_import(path_or_file=path, gold_set_name="bad")
    assert error.value.line == line and reason in str(error.value)
    assert str(error.value).startswith(f"line {line}: ")
    assert not GoldSet.objects.filter(name="bad").exists()
    assert not Query.objects.exists() and not Label.objects.exists()


def test_invalid_json_names_its_line(setup, tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", GOOD, extra_lines=['{"id": "x", "question": '])
    with pytest.raises(GoldImportError, match=r"^line 4: invalid JSON"):
        goldset_import(path_or_file=path, gold_set_name="bad")
    assert not Query.objects.exists()


def test_a_json_line_that_is_not_an_object_is_refused(setup, tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", GOOD[:1], extra_lines=["[1, 2]"])
    with pytest.raises(GoldImportError, match=r"^line 2: expected a JSON object"):
        goldset_import(path_or_file=path, gold_set_name="bad")


def test_a_clash_with_an_earlier_batch_is_found_and_nothing_written(setup, tmp_path, monkeypatch):
    monkeypatch.setattr(goldset_io, "BATCH_SIZE", 2)
    records = [GOOD[0], GOOD[1], GOOD[2], dict(GOOD[0], label="wrong", error_class="syntax")]
    with pytest.raises(GoldImportError, match=r"^line 4: id 'a1' labelled twice by the import"):
        goldset_import(path_or_file=write_jsonl(tmp_path / "b.jsonl", records), gold_set_name="bad")
    assert not Query.objects.exists() and not Label.objects.exists()


def test_an_exact_repeat_of_a_line_is_harmless(setup, tmp_path):
    version = goldset_import(path_or_file=write_jsonl(tmp_path / "g.jsonl", [*GOOD, GOOD[0]]), gold_set_name="g")
    assert version.items.count() == 3 and Label.objects.count() == 3


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ('id,question,sql,label\na1,q,"SELECT 1,correct\n', 2, "bad CSV"),
        ("id,question,label\na1,q,correct\n", 1, "missing column 'sql'"),
        ("id,question,sql,label\na1,q,SELECT 1,correct,extra\n", 2, "expected 4 fields, found 5"),
        ('id,question,sql,label,error_class\na1,q,"SELECT\n1",maybe,\n', 2, "label must be correct or wrong"),
        (
            'id,question,sql,label,error_class\na1,q,"SELECT\n1",correct,\na2,q,x,wrong,bogus\n',
            4,
            "unknown error class",
        ),
    ],
)
def test_bad_csv_stops_the_import_at_its_line(setup, tmp_path, text, line, reason):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GoldImportError) as error:
        goldset_import(path_or_file=path, gold_set_name="bad")
    assert error.value.line == line and reason in error.value.reason
    assert not Query.objects.exists()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_round_trips_exactly(setup, tmp_path, fmt):
    first = goldset_import(path_or_file=write_jsonl(tmp_path / "g.jsonl", GOOD), gold_set_name="one")
    exported = io.StringIO()
    assert goldset_export(version=first, fmt=fmt, out=exported) == 3
    path = tmp_path / f"export.{fmt}"
    path.write_text(exported.getvalue(), encoding="utf-8")
    second = goldset_import(path_or_file=path, gold_set_name="two")
    again = io.StringIO()
    goldset_export(version=second, fmt=fmt, out=again)
    assert again.getvalue() == exported.getvalue()
    if fmt == "jsonl":
        records = [json.loads(line) for line in exported.getvalue().splitlines()]
        assert [r["id"] for r in records] == ["a1", "a2", "a3"]
        assert records[1]["sql"] == GOOD[1]["sql"] and records[1]["reference_sql"] == "SELECT 1"
        assert records[2]["question"] == GOOD[2]["question"]


def test_import_accepts_an_uploaded_binary_file(setup):
    data = "\n".join(json.dumps(r) for r in GOOD).encode()
    version = goldset_import(path_or_file=io.BytesIO(data), gold_set_name="up", fmt="jsonl")
    assert version.items.count() == 3


def test_the_command_imports_and_reports_the_version(setup, tmp_path):
    out = io.StringIO()
    call_command("import_gold", str(write_jsonl(tmp_path / "g.jsonl", GOOD)), "--gold-set", "cmd", stdout=out)
    assert "cmd v1" in out.getvalue() and Query.objects.count() == 3


def test_the_command_fails_with_the_line_and_writes_nothing(setup, tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [GOOD[0], dict(GOOD[1], error_class="made_up")])
    with pytest.raises(CommandError, match="line 2: unknown error class 'made_up'"):
        call_command("import_gold", str(path), "--gold-set", "cmd")
    assert not Query.objects.exists()


@pytest.mark.slow
def test_the_command_exits_non_zero_on_a_bad_file(tmp_path):
    """Run the real command in a process on a scratch database: exit status and message."""

    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'scratch.sqlite3'}"}
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, capture_output=True)
    path = write_jsonl(tmp_path / "g.jsonl", [GOOD[0]], extra_lines=["not json"])
    result = subprocess.run(
        [*manage, "import_gold", str(path), "--gold-set", "cmd"], env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "line 2: invalid JSON" in result.stderr
    good = write_jsonl(tmp_path / "ok.jsonl", [GOOD[0]])
    result = subprocess.run(
        [*manage, "import_gold", str(good), "--gold-set", "cmd"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0 and "cmd v1: 1 items published" in result.stdout


def test_a_large_import_leaves_fingerprints_to_a_task_enqueued_on_commit(
    setup, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):

    monkeypatch.setattr(goldset_writer, "INLINE_FINGERPRINT_LIMIT", 1)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        version = goldset_import(path_or_file=write_jsonl(tmp_path / "g.jsonl", GOOD), gold_set_name="big")
    assert len(callbacks) == 1
    assert Query.objects.filter(gold_set__name="big", fingerprint="").count() == 2
    assert query_fingerprint_fill(gold_set_id=version.gold_set_id) == 2
    a2 = Query.objects.get(external_id="a2")
    assert a2.fingerprint == sql_fingerprint(a2.sql, a2.dialect)
    assert query_fingerprint_fill(gold_set_id=version.gold_set_id) == 0  # idempotent


def test_the_demo_step_imports_once_and_then_leaves_the_gold_set_alone(setup, tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "DEMO_GOLD_FILE", write_jsonl(tmp_path / "demo_gold.jsonl", GOOD))
    out = io.StringIO()
    demo.demo_gold_load(out)
    demo.demo_gold_load(out)
    assert "demo v1 with 3 items" in out.getvalue() and "already imported" in out.getvalue()
    assert GoldSet.objects.get(name="demo").versions.count() == 1


def test_the_committed_demo_gold_file_imports_cleanly(setup):
    version = goldset_import(path_or_file=DEMO_GOLD_FILE, gold_set_name="demo")
    lines = [json.loads(line) for line in DEMO_GOLD_FILE.read_text().splitlines() if line.strip()]
    assert version.items.count() == len(lines)
    assert version.items.filter(decision="wrong").count() == sum(r["label"] == "wrong" for r in lines)
    with_reference = sum(bool(r.get("reference_sql")) for r in lines)
    assert Query.objects.filter(gold_set__name="demo").exclude(reference_sql="").count() == with_reference


def test_a_csv_with_a_byte_order_mark_imports(setup, tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffid,question,sql,label,error_class\nb1,q,SELECT 1,correct,\n".encode())
    assert goldset_import(path_or_file=path, gold_set_name="bom").items.count() == 1


def test_label_counts_after_import_feed_the_queue_correctly(setup, tmp_path):
    records = [GOOD[0], dict(GOOD[0], labeller="labeller-user"), GOOD[1]]
    goldset_import(path_or_file=write_jsonl(tmp_path / "g.jsonl", records), gold_set_name="counts")
    assert Query.objects.get(external_id="a1").label_count == 2  # the import and labeller-user
    assert Query.objects.get(external_id="a2").label_count == 1
    changed = dict(GOOD[1], label="correct", error_class=None)
    goldset_import(path_or_file=write_jsonl(tmp_path / "h.jsonl", [changed]), gold_set_name="counts")
    assert Query.objects.get(external_id="a2").label_count == 1  # superseded, not added
    assert Label.objects.filter(query__external_id="a2", is_current=True).get().decision == "correct"
