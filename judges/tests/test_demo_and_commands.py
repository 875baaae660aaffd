"""The demo judges, the demo run, and the two management commands."""

import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from judges.demo import register_simulated_judges, run_demo_calibration
from judges.models import RunStatus, Verdict
from judges.simulator.oracle import gold_label_oracle
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from labelling.models import Query
from probes.fingerprint import sql_fingerprint
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


def test_simulate_vendor_serves_until_stopped(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "manage.py", "simulate_vendor", "--port", str(port), "--no-oracle"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:

        def healthy():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_for(healthy, timeout=30, what="the simulator to answer")
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=10)
    assert "SIMULATED" in output


def test_the_simulator_oracle_reads_gold_labels_by_fingerprint(transactional_db):
    gold = gold_set_version_with([("correct", "wrong", "missing_filter")], name="oracle")
    query = Query.objects.get(gold_set=gold.gold_set)
    # Labelled SQL without the marker, as real demo SQL has none.
    query.sql = "SELECT COUNT(*) FROM orders"
    query.fingerprint = sql_fingerprint(query.sql, "sqlite")
    query.save()
    oracle = gold_label_oracle()
    truth = oracle("select count(*)   from ORDERS")
    assert (truth.wrong, truth.error_class) == (True, "missing_filter")
    assert oracle("SELECT 42") is None
