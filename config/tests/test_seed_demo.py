"""seed_demo loads everything the demo needs and can run again without harm."""

import io
import json
import socket

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from config.management.commands.seed_demo import (
    DEMO_LIVE_COUNT,
    DEMO_USERS,
    run_demo_calibration,
    write_simulator_truth,
)
from judges.backends.ladder import RUNGS
from judges.models import CalibrationRun, JudgeVersion
from labelling.models import GoldSetVersion, Query
from probes.models import Warehouse
from probes.selectors import catalogue_get_latest
from simulator import Simulator, TruthFile, start_in_thread
from triage.models import LiveQuery
from triage.policy import policy_current


@pytest.fixture
def isolated_var(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    return tmp_path


@pytest.fixture
def private_simulator_port(settings):
    """Point seed_demo at a free port, where nothing answers until the test starts a simulator.

    On the default port a simulator of `make run`, or of another test session on this
    machine, could answer instead, or be shut down in the middle of the demo run.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.VENDOR_SIMULATOR_URL = f"http://127.0.0.1:{port}"
    return port


@pytest.mark.django_db
def test_seed_demo_loads_the_whole_demo_and_can_run_again(isolated_var, private_simulator_port, capsys, monkeypatch):
    monkeypatch.setenv("DOCKET_DEMO_PASSWORD", "demo-pass-123")
    call_command("seed_demo")
    out = capsys.readouterr().out
    assert "demo-pass-123" in out
    # No simulator answers yet: everything but the calibration run, and the simulator's truth.
    assert "demo calibration: no vendor simulator answers" in out
    assert not CalibrationRun.objects.exists()
    truth_path = isolated_var / "simulator-truth.jsonl"
    assert len(truth_path.read_text().splitlines()) >= 200
    # What `make run` does next: the simulator process reads that file, then the calibration runs.
    server, _ = start_in_thread(Simulator(oracle=TruthFile(truth_path)), port=private_simulator_port)
    try:
        call_command("seed_demo", calibration_only=True)
    finally:
        server.shutdown()
        server.server_close()
    assert "demo calibration: run" in capsys.readouterr().out
    warehouse = Warehouse.objects.get(name="demo")
    assert warehouse.dialect == "sqlite"
    assert "orders" in catalogue_get_latest(warehouse_id=warehouse.pk).snapshot["tables"]
    assert "demo" in json.loads(settings.WAREHOUSES_FILE.read_text())
    version = GoldSetVersion.objects.get(gold_set__name="demo")
    assert version.items.count() >= 200
    assert version.items.filter(decision="wrong").count() >= 40
    run = CalibrationRun.objects.get(label="demo")
    assert run.status == "completed"
    judge_count = run.judge_versions.count()
    assert judge_count >= 2
    assert run.verdicts.count() == judge_count * version.items.count() * run.repeats
    assert all(jv.is_simulated for jv in run.judge_versions.all())
    # The truth reached the simulator: its judges reject wrong items far more often than correct ones.
    rejects = {
        decision: run.verdicts.filter(query__version_items__decision=decision, decision="reject").count()
        / run.verdicts.filter(query__version_items__decision=decision).count()
        for decision in ("wrong", "correct")
    }
    assert rejects["wrong"] > 2 * rejects["correct"], rejects
    assert set(policy_current().judge_versions.all()) == set(run.judge_versions.all())
    # One ladder judge per rung is registered for the run form, and kept out of the demo run.
    ladder = JudgeVersion.objects.filter(backend="ladder")
    assert sorted(v.config["rung"] for v in ladder) == sorted(RUNGS)
    assert not run.judge_versions.filter(backend="ladder").exists()
    live = Query.objects.filter(source="live")
    assert live.count() == DEMO_LIVE_COUNT
    assert LiveQuery.objects.filter(query__in=live).count() == DEMO_LIVE_COUNT

    # A second run (every `make run` does one) changes nothing.
    call_command("seed_demo", quiet_logins=True)
    assert get_user_model().objects.filter(username__startswith="demo-").count() == len(DEMO_USERS)
    assert Warehouse.objects.filter(name="demo").count() == 1
    assert GoldSetVersion.objects.filter(gold_set__name="demo").count() == 1
    assert CalibrationRun.objects.filter(label="demo").count() == 1
    assert Query.objects.filter(source="live").count() == DEMO_LIVE_COUNT


@pytest.mark.django_db
def test_where_the_simulator_is_off_seed_demo_writes_no_truth_and_runs_no_calibration(isolated_var, settings):
    """Production settings turn the simulator off: the demo neither hands it gold labels nor calls it."""
    settings.VENDOR_SIMULATOR_ENABLED = False
    out = io.StringIO()
    write_simulator_truth(out)
    run_demo_calibration(out)
    assert not (isolated_var / "simulator-truth.jsonl").exists()
    assert "the vendor simulator is off here" in out.getvalue()
    assert "demo calibration: no vendor simulator answers" in out.getvalue()
    assert not CalibrationRun.objects.exists()
