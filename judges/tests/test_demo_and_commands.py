"""The demo judges, the demo run, and the two management commands."""

import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import anthropic
import pytest
from django.core.management import CommandError, call_command

from judges.demo import register_simulated_judges, run_demo_calibration
from judges.models import RunStatus, Verdict
from judges.simulator_truth import gold_label_oracle
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from labelling.models import Query
from probes.fingerprint import sql_fingerprint
from simulator import Simulator
from tests.support.fixtures import wait_for

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_registers_three_simulated_judges_of_different_families_once():
    first = register_simulated_judges()
    again = register_simulated_judges()
    assert [v.pk for v in first] == [v.pk for v in again]
    assert {v.family for v in first} == {"anthropic", "openai", "meta"}
    assert all(v.is_simulated for v in first)


def test_the_demo_run_finishes_with_every_verdict_and_is_not_repeated(vendor_simulator):
    gold = gold_set_version_with(mixed_items(10, 5), name="demo")
    run = run_demo_calibration(gold, repeats=2)
    assert run.status == RunStatus.COMPLETED
    assert Verdict.objects.filter(run=run).count() == 15 * 3 * 2
    assert run_demo_calibration(gold_set_name="demo").pk == run.pk


def test_run_calibration_runs_a_gold_set_inline_and_reports_it(vendor_simulator, capsys):
    gold = gold_set_version_with(mixed_items(4, 2), name="cli")
    version = simulated_version(name="cli-judge")
    call_command("run_calibration", "--gold-set", "cli", "--judge", "cli-judge", "--repeats", "2", "--inline")
    assert Verdict.objects.filter(judge_version=version, run__gold_set_version=gold).count() == 12
    assert "completed" in capsys.readouterr().out


def test_run_calibration_names_a_judge_that_does_not_exist():
    gold_set_version_with(mixed_items(1, 0), name="cli2")
    with pytest.raises(CommandError, match="no judge named 'nobody'"):
        call_command("run_calibration", "--gold-set", "cli2", "--judge", "nobody")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def simulated_call(url: str, sql: str) -> dict:
    """One Anthropic Messages call to the simulator by its real SDK: the verdict it returns."""
    client = anthropic.Anthropic(api_key="sim-key", base_url=url, max_retries=0)
    message = client.messages.create(
        model="sim-exact",
        max_tokens=64,
        tools=[{"name": "record_verdict", "description": "verdict", "input_schema": {"type": "object"}}],
        tool_choice={"type": "tool", "name": "record_verdict"},
        messages=[{"role": "user", "content": f"<sql>\n{sql}\n</sql>"}],
    )
    return message.content[0].input


def test_the_exported_truth_reaches_a_simulator_process_started_with_it(tmp_path, settings):
    """`export_simulator_truth` writes the gold labels; `python -m simulator --truth` judges by them."""
    settings.VENDOR_SIMULATOR_ENABLED = True
    gold = gold_set_version_with([("correct", "wrong", "missing_filter")], name="truth")
    query = Query.objects.get(gold_set=gold.gold_set)
    query.sql = "SELECT COUNT(*) FROM orders"
    query.fingerprint = sql_fingerprint(query.sql, "sqlite")
    query.save()
    truth_file = tmp_path / "truth.jsonl"
    call_command("export_simulator_truth", "--output", str(truth_file))
    assert [json.loads(line) for line in truth_file.read_text().splitlines()] == [
        {"sql": "SELECT COUNT(*) FROM orders", "wrong": True, "error_class": "missing_filter"}
    ]
    assert truth_file.stat().st_mode & 0o077 == 0, "the gold labels are readable by their owner only"
    config = tmp_path / "models.json"
    exact = {"catch_probability": 1.0, "false_reject_probability": 0.0, "flip_probability": 0.0, "class_accuracy": 1.0}
    config.write_text(json.dumps({"models": {"sim-exact": exact}}))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "simulator", "--port", str(port), "--truth", str(truth_file), "--config", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def healthy():
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_for(healthy, timeout=30, what="the simulator to answer")
        # Folded white space and case still find the label; an unlabelled text is correct.
        verdict = simulated_call(url, "select count(*)\n  from ORDERS;")
        assert (verdict["decision"], verdict["error_class"]) == ("reject", "missing_filter")
        assert simulated_call(url, "SELECT 42")["decision"] == "accept"
        # A fresh export reaches the running simulator: the file is read again when it changes.
        truth_file.write_text(json.dumps({"sql": "SELECT 42", "wrong": True, "error_class": "syntax"}) + "\n")
        assert simulated_call(url, "SELECT 42")["error_class"] == "syntax"
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=10)
    assert "SIMULATED" in output and server.returncode is not None


def test_no_truth_file_is_written_where_the_simulator_is_off(tmp_path, settings):
    settings.VENDOR_SIMULATOR_ENABLED = False
    with pytest.raises(CommandError, match="simulator is off"):
        call_command("export_simulator_truth", "--output", str(tmp_path / "truth.jsonl"))
    assert not (tmp_path / "truth.jsonl").exists()


def test_the_simulator_oracle_reads_gold_labels_by_fingerprint(transactional_db):
    gold = gold_set_version_with([("correct", "wrong", "missing_filter")], name="oracle")
    query = Query.objects.get(gold_set=gold.gold_set)
    # Labelled SQL without the marker, as real demo SQL has none.
    query.sql = "SELECT COUNT(*) FROM orders"
    query.fingerprint = sql_fingerprint(query.sql, "sqlite")
    query.save()
    oracle = gold_label_oracle()
    assert oracle("select count(*)   from ORDERS") == {"wrong": True, "error_class": "missing_filter"}
    assert oracle("SELECT 42") is None
    truth = Simulator(oracle=oracle).truth_for("select count(*)   from ORDERS")
    assert (truth.wrong, truth.error_class) == (True, "missing_filter")
