"""import_verdicts never guesses: numeric decisions need --positive-means, unreadable ones are refused."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from judges.models import Verdict
from labelling.goldset_io import goldset_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.jsonl"
    records = [
        {"id": "g1", "question": "q1", "sql": "SELECT 1", "label": "wrong", "error_class": "join_fanout"},
        {"id": "g2", "question": "q2", "sql": "SELECT 2", "label": "correct"},
        {"id": "g3", "question": "q3", "sql": "SELECT 3", "label": "wrong", "error_class": "syntax"},
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return goldset_import(path_or_file=path, gold_set_name="ng")


def table(tmp_path, header, rows, name="verdicts.csv"):
    path = tmp_path / name
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def run(path, *args):
    out = io.StringIO()
    call_command("import_verdicts", str(path), "--gold-set", "ng", "--format", "csv", "--map", "query_id=item",
                 *args, stdout=out)  # fmt: skip
    return out.getvalue()


BUGS = [["g1", "1", "join_fanout", "x"], ["g2", "0", "", "x"], ["g3", "1", "unknown_object", "x"], ["zz", "1", "", "x"]]
HEADER = ["item", "is_bug", "guess", "notes"]


def test_a_numeric_column_is_refused_without_positive_means_naming_the_flag(gold, tmp_path):
    with pytest.raises(CommandError, match=r"'is_bug' holds '1'.*--positive-means accept\|reject"):
        run(table(tmp_path, HEADER, BUGS), "--judge", "lint", "--map", "decision=is_bug")
    assert not Verdict.objects.exists()


def test_with_positive_means_the_column_is_read_and_the_summary_counts_each_decision(gold, tmp_path):
    out = run(table(tmp_path, HEADER, BUGS), "--judge", "lint", "--map", "decision=is_bug",
              "--positive-means", "reject", "--map", "error_class_guess=guess")  # fmt: skip
    assert "lint (3: 1 accept, 2 reject, 0 error, 1 skipped)" in out
    assert "fields not read: notes" in out and "class guesses on 2" in out
    stored = dict(Verdict.objects.values_list("query__external_id", "decision"))
    assert stored == {"g1": "reject", "g2": "accept", "g3": "reject"}
    assert Verdict.objects.get(query__external_id="g3").error_class_guess == "unknown_object"


def test_a_judge_whose_every_decision_is_unreadable_is_refused_naming_the_column_and_examples(gold, tmp_path):
    rows = [["g1", "maybe", "", ""], ["g2", "perhaps", "", ""], ["g3", "dunno", "", ""]]
    with pytest.raises(CommandError, match=r"column 'is_bug' holds 'maybe', 'perhaps', 'dunno'"):
        run(table(tmp_path, HEADER, rows), "--judge", "lint", "--map", "decision=is_bug")
    assert not Verdict.objects.exists()


def test_strict_refuses_an_unknown_field_by_name(gold, tmp_path):
    with pytest.raises(CommandError, match="unknown field 'notes'"):
        run(table(tmp_path, HEADER, BUGS[:3]), "--judge", "lint", "--map", "decision=is_bug",
            "--positive-means", "reject", "--map", "error_class_guess=guess", "--strict")  # fmt: skip
    assert not Verdict.objects.exists()


def test_the_run_label_names_the_runs_in_the_report(gold, tmp_path):
    run(table(tmp_path, HEADER, BUGS[:3]), "--judge", "lint", "--map", "decision=is_bug",
        "--positive-means", "reject", "--run", "join-lint")  # fmt: skip
    out = io.StringIO()
    call_command("judge_report", "--gold-set", "ng", "--runs", "join-lint", stdout=out)
    report = json.loads(out.getvalue())
    assert list(report["run_labels"].values()) == ["join-lint"] and report["judges"][0]["items"] == 3
