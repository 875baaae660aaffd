"""import_verdicts: JSONL onto a gold set, all lines or none."""

import json

import pytest
from django.core.management import CommandError, call_command

from judges.models import Backend, CalibrationRun, Judge, RunStatus, Verdict
from judges.report import build_report
from judges.tests.calibration_builders import labels, make_gold_set, make_judge_version

pytestmark = pytest.mark.django_db


def line(query_id="q000", judge="vendor-x", run="batch-1", repeat=0, decision="reject", **extra):
    record = {
        "query_id": query_id,
        "judge": judge,
        "run": run,
        "repeat": repeat,
        "decision": decision,
        "reason": "fan-out on shipments",
        "cost_usd": 0.072,
        "latency_ms": 2300,
        "input_tokens": 3900,
        "output_tokens": 180,
    }
    record.update(extra)
    return json.dumps(record)


@pytest.fixture
def gold():
    make_gold_set("imports", labels(2, 2), number=1)
    return make_gold_set("imports", labels(2, 2), number=2)


def write(tmp_path, lines):
    path = tmp_path / "verdicts.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_import_creates_replay_judges_and_a_completed_run_on_the_latest_version(tmp_path, gold, capsys):
    path = write(
        tmp_path,
        [
            line("q000"),
            line("q001", decision="accept"),
            line("q002", decision="error"),
            line("q003", judge="other", run=None),
        ],
    )
    call_command("import_verdicts", str(path), "--gold-set", "imports")
    assert "imported 4 verdicts" in capsys.readouterr().out
    judge = Judge.objects.get(name="vendor-x")
    assert [(v.number, v.backend) for v in judge.versions.all()] == [(1, Backend.REPLAY)]
    run = CalibrationRun.objects.get(label="batch-1")
    assert run.gold_set_version == gold and run.status == RunStatus.COMPLETED
    assert CalibrationRun.objects.get(label="import").verdicts.count() == 1
    verdict = Verdict.objects.get(query__external_id="q000", judge_version__judge=judge)
    assert (str(verdict.cost_usd), verdict.latency_ms, verdict.input_tokens) == ("0.07200000", 2300, 3900)
    report = build_report(gold_set_version=gold)
    vendor = next(j for j in report["judges"] if j["name"] == "vendor-x")
    # q000 and q001 are wrong (one caught); q002, correct, only errored: no false-reject rate.
    assert vendor["errors"] == 1 and vendor["catch_rate"] == 0.5 and vendor["false_reject_rate"] is None


def test_a_known_judge_gets_its_latest_version(tmp_path, gold):
    make_judge_version("known", number=1)
    latest = make_judge_version("known", number=2)
    call_command("import_verdicts", str(write(tmp_path, [line(judge="known")])), "--gold-set", "imports")
    assert Verdict.objects.get().judge_version == latest


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "line 3: invalid JSON"),
        ("[" * 5000 + "]" * 5000, "line 3: invalid JSON \\(nested too deeply\\)"),
        (line(decision="maybe"), "line 3: decision 'maybe'"),
        (line(repeat=-1), "line 3: repeat must be a non-negative integer"),
        (line(cost_usd="lots"), "line 3: cost_usd must be a number"),
        (line(judge="x" * 201), "line 3: judge name is longer than 200 characters"),
        (json.dumps({"judge": "x", "decision": "accept"}), "line 3: missing field 'query_id'"),
        (line("q000"), "line 3: same judge, item, run and repeat as line 1"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_written(tmp_path, gold, bad, message):
    path = write(tmp_path, [line("q000"), line("q001"), bad])
    with pytest.raises(CommandError, match=message):
        call_command("import_verdicts", str(path), "--gold-set", "imports")
    assert Verdict.objects.count() == 0
    assert not Judge.objects.filter(name="vendor-x").exists()
    assert not CalibrationRun.objects.exists()


def test_importing_the_same_file_twice_is_refused_without_duplicates(tmp_path, gold):
    path = write(tmp_path, [line("q000"), line("q001")])
    call_command("import_verdicts", str(path), "--gold-set", "imports")
    with pytest.raises(CommandError, match="line 1: this verdict .* already exists"):
        call_command("import_verdicts", str(path), "--gold-set", "imports")
    assert Verdict.objects.count() == 2


def test_an_unknown_gold_set_is_an_error(tmp_path, gold):
    with pytest.raises(CommandError, match="no gold set named 'missing'"):
        call_command("import_verdicts", str(write(tmp_path, [line()])), "--gold-set", "missing")
