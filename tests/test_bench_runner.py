import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.run_all import bench_modules, result_line

ROOT = Path(__file__).resolve().parents[1]


def test_a_met_target_prints_the_contract_line():
    line, met = result_line({"name": "x_ratio", "value": 1.1, "unit": "ratio", "target_op": "<=", "target": 1.25})
    assert met
    assert line == "x_ratio 1.1 ratio (target <= 1.25)"


def test_a_missed_target_is_marked_not_hidden():
    line, met = result_line({"name": "p50", "value": 7.0, "unit": "ms", "target_op": "<", "target": 5})
    assert not met
    assert line.endswith("MISSED")


def test_a_name_with_spaces_becomes_one_token():
    line, _ = result_line(
        {"name": "fan-out probe p50, demo (PG)", "value": 15.0, "unit": "ms", "target_op": "<", "target": 100}
    )
    assert line == "fan_out_probe_p50_demo_pg 15 ms (target < 100)"


def test_a_measurement_without_a_target_is_informational_and_never_met():
    line, met = result_line({"name": "fill seconds", "value": 12.5, "unit": "s"})
    assert met is None
    assert line == "fill_seconds 12.5 s (informational)"


@pytest.mark.parametrize("name", list(bench_modules()))
def test_every_benchmark_module_imports_and_has_a_run(name):
    """`make bench` is not in CI: a module split that breaks a benchmark's imports shows up here."""
    module = importlib.import_module(f"tests.bench.{name}")
    assert callable(module.run)


def test_a_benchmark_child_process_starts_in_a_fresh_var_folder(tmp_path):
    """Benchmarks fill databases in child processes with a var folder of their own (no key yet)."""
    env = {key: value for key, value in os.environ.items() if key != "SECRET_KEY"}
    env |= {"DOCKET_VAR_DIR": str(tmp_path / "var"), "DATABASE_URL": f"sqlite:///{tmp_path / 'bench.sqlite3'}"}
    started = subprocess.run(
        [sys.executable, "-c", "import tests.bench.django_ready"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr[-2000:]
    assert (tmp_path / "var" / "secret_key").exists()
