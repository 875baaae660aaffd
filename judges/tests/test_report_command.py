"""judge_report prints the same report as JSON, CSV or a table."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from judges.report import build_report
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def version():
    make_gold_set("cli", labels(2, 2), number=1)
    version = make_gold_set("cli", labels(2, 2), number=2)
    run = make_run(version)
    add_verdicts(run, make_judge_version("cheap"), ["accept"] * 4, cost="0.001", latency=10)
    sharp = make_judge_version("sharp", simulated=True)
    add_verdicts(run, sharp, ["reject", "reject", "reject", "accept"], cost="0.05")
    return version


def run_report(*args):
    out = io.StringIO()
    call_command("judge_report", "--gold-set", "cli", *args, stdout=out)
    return out.getvalue()


def test_json_output_is_the_build_report_dict(version):
    printed = json.loads(run_report("--format", "json", "--generation-cost", "0.01", "--baseline", "cheap"))
    report = build_report(gold_set_version=version, generation_cost_usd=0.01, baseline="cheap")
    expected = json.loads(json.dumps(report))
    assert printed == expected
    assert printed["version"] == 2
    sharp = printed["judges"][1]
    assert sharp["name"] == "sharp" and sharp["break_even_error_cost_usd"] is not None


def test_an_older_version_can_be_chosen(version):
    printed = json.loads(run_report("--version", "1"))
    assert printed["version"] == 1 and printed["judges"] == []


def test_csv_has_one_row_per_judge_with_split_intervals(version):
    rows = list(csv.DictReader(io.StringIO(run_report("--format", "csv"))))
    assert [row["name"] for row in rows] == ["cheap", "sharp"]
    assert float(rows[1]["catch_rate"]) == 1.0
    assert float(rows[1]["catch_rate_ci95_lo"]) < 1.0
    assert rows[1]["catch_rate_join_fanout"] == "1.0"


def test_table_lists_judges_and_marks_simulated_ones(version):
    table = run_report("--format", "table")
    assert "cli v2: 4 items (2 wrong, 2 correct)" in table
    assert "sharp v1 [simulated]" in table
    assert "cheap v1 + sharp v1" in table


def test_bad_arguments_are_clear_errors(version):
    with pytest.raises(CommandError, match="no version 7"):
        run_report("--version", "7")
    with pytest.raises(CommandError, match="judge 'ghost' has no verdicts"):
        run_report("--baseline", "ghost")
