"""Demo data for judges: simulated judges of three families and one finished calibration run.

Called by `seed_demo`. Everything here is simulated and labelled so: the judge versions
have `is_simulated=True` and their verdicts come from the local vendor simulator, which is
a process of its own (`python -m simulator`, started by `make run`): this module only calls
it over HTTP, at settings.VENDOR_SIMULATOR_URL.
"""

from __future__ import annotations

import urllib.request
from decimal import Decimal

from django.db import transaction

from judges.backends.ladder import RUNGS
from judges.models import Backend, CalibrationRun, Judge, JudgeVersion, RunStatus
from judges.runner import run_chunk_execute
from judges.services import calibration_run_plan, judge_create
from labelling.models import GoldSetVersion

SIMULATED_JUDGES = [
    {
        "name": "claude-sim",
        "description": "Simulated Claude-family judge (local vendor simulator).",
        "backend": "anthropic",
        "family": "anthropic",
        "model": "sim-claude-judge",
        "prices": ("3", "15", "0.3", "3.75"),
    },
    {
        "name": "gpt-sim",
        "description": "Simulated OpenAI-family judge (local vendor simulator).",
        "backend": "openai_compatible",
        "family": "openai",
        "model": "sim-gpt-judge",
        "prices": ("2.5", "10", "1.25", "0"),
    },
    {
        "name": "llama-sim",
        "description": "Simulated open-weights judge behind an OpenAI-compatible server (local vendor simulator).",
        "backend": "openai_compatible",
        "family": "meta",
        "model": "sim-llama-judge",
        "prices": ("0.6", "0.6", "0", "0"),
    },
]


def register_simulated_judges() -> list[JudgeVersion]:
    """Create the simulated demo judges if missing; return their latest versions."""
    versions = []
    for spec in SIMULATED_JUDGES:
        judge = Judge.objects.filter(name=spec["name"]).first()
        if judge is None:
            price_in, price_out, price_read, price_write = (Decimal(p) for p in spec["prices"])
            judge = judge_create(
                name=spec["name"],
                description=spec["description"],
                backend=spec["backend"],
                family=spec["family"],
                model=spec["model"],
                max_tokens=512,
                price_input_per_mtok=price_in,
                price_output_per_mtok=price_out,
                price_cache_read_per_mtok=price_read,
                price_cache_write_per_mtok=price_write,
                config={"simulated": True, "concurrency": 16},
                is_simulated=True,
            )
        versions.append(judge.latest_version)
    return versions


def register_ladder_judges() -> list[JudgeVersion]:
    """Create one deterministic judge per rung of the verification ladder (seed 002) if missing.

    They are not run by the demo: they would join every ensemble on the dashboard. An ML
    engineer starts a run with them from the run form, and the dashboard's ladder appears.
    """
    versions = []
    for rung in RUNGS:
        name = f"ladder-{rung.replace('_', '-')}"
        judge = Judge.objects.filter(name=name).first()
        if judge is None:
            judge = judge_create(
                name=name,
                description=f"Verification ladder up to the {rung} rung: rejects at the first rung a query fails.",
                backend=Backend.LADDER,
                config={"rung": rung},
            )
        versions.append(judge.latest_version)
    return versions


def simulator_is_up(base_url: str) -> bool:
    """Say whether a vendor simulator answers its health check at base_url."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/health", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def run_demo_calibration(gold_set_version=None, *, gold_set_name: str = "demo", repeats: int = 3):
    """Run the simulated judges over the demo gold set to completion, in this process.

    Idempotent: an existing completed demo run is returned. The judges call the simulator
    at settings.VENDOR_SIMULATOR_URL: the caller makes sure one answers (`seed_demo` checks
    with `simulator_is_up`).
    """
    if gold_set_version is None:
        gold_set_version = GoldSetVersion.objects.filter(gold_set__name=gold_set_name).order_by("-number").first()
        if gold_set_version is None:
            return None
    versions = register_simulated_judges()
    existing = CalibrationRun.objects.filter(
        gold_set_version=gold_set_version, label="demo", status=RunStatus.COMPLETED
    ).first()
    if existing:
        return existing
    return run_inline(gold_set_version=gold_set_version, judge_versions=versions, repeats=repeats, label="demo")


def run_inline(
    *, gold_set_version, judge_versions, repeats: int = 3, label: str = "", spend_cap_usd=None, progress=None
):
    """Plan and execute a run in this process (no worker), chunk by chunk; return the run."""
    with transaction.atomic():
        run = CalibrationRun.objects.create(
            label=label, gold_set_version=gold_set_version, repeats=repeats, spend_cap_usd=spend_cap_usd
        )
        run.judge_versions.set(judge_versions)
    for chunk_id in calibration_run_plan(run=run):
        run_chunk_execute(chunk_id=chunk_id)
        if progress:
            progress(run)
    run.refresh_from_db()
    return run
