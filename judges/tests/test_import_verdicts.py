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


def test_imported_verdicts_are_stored_in_a_replay_version_marked_with_their_source_format(tmp_path, gold):
    call_command("import_verdicts", str(write(tmp_path, [line("q000"), line("q001")])), "--gold-set", "imports")
    version = Judge.objects.get(name="vendor-x").latest_version
    assert (version.backend, version.config) == (Backend.REPLAY, {"imported": True, "source_format": "docket"})
    for verdict in Verdict.objects.all():
        assert verdict.judge_version == version
        # Judged elsewhere: not by the simulator, and by no vendor host Docket called.
        assert (verdict.simulated, verdict.endpoint) == (False, "imported")
        assert verdict.context == {"imported": {"format": "docket", "file": "verdicts.jsonl"}}


def test_a_judge_docket_runs_never_receives_foreign_verdicts_in_its_versions(tmp_path, gold):
    make_judge_version("known", number=1, backend=Backend.ANTHROPIC, simulated=True)
    make_judge_version("known", number=2, backend=Backend.OPENAI_COMPATIBLE)
    call_command("import_verdicts", str(write(tmp_path, [line(judge="known")])), "--gold-set", "imports")
    verdict = Verdict.objects.get()
    assert verdict.judge_version.judge.title == "known (imported)"
    assert (verdict.judge_version.backend, verdict.simulated) == (Backend.REPLAY, False)
    assert not Verdict.objects.filter(judge_version__judge__name="known").exists()
    # The next import of that name finds the imported judge again.
    call_command("import_verdicts", str(write(tmp_path, [line("q001", judge="known")])), "--gold-set", "imports")
    assert set(Verdict.objects.values_list("judge_version", flat=True)) == {verdict.judge_version_id}


def test_one_judge_keeps_one_replay_version_per_source_format(tmp_path, gold):
    first = write(tmp_path, [line("q000")])
    call_command("import_verdicts", str(first), "--gold-set", "imports")
    csv = tmp_path / "more.csv"
    csv.write_text("item,verdict\nq001,reject\n")
    call_command(
        "import_verdicts",
        str(csv),
        "--gold-set",
        "imports",
        "--map",
        "query_id=item",
        "--map",
        "decision=verdict",
        "--judge",
        "vendor-x",
    )
    judge = Judge.objects.get(name="vendor-x")
    assert [(v.number, v.config["source_format"]) for v in judge.versions.order_by("number")] == [
        (1, "docket"),
        (2, "csv"),
    ]
    assert Verdict.objects.get(query__external_id="q001").judge_version.number == 2


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
