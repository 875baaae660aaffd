"""Benchmark: bytes per verdict in the database at 100,000 verdicts, with and without the call trace.

Two fresh SQLite databases are filled with the same 100,000 verdicts of a simulated
Claude judge on the demo gold set: one as verdicts were stored before issue 16 (raw
response, usage, attempts), one with the full trace (the request's own part, endpoint,
catalogue version, schema slice and retry causes in the context, and the shared request
prefix stored once by hash). Requests and responses are built by the real backend and the
simulator's response builder, not made up. Target: the trace costs at most 2 KB per
verdict beyond the baseline, measured in the same run.

    python -m tests.bench.bench_verdict_storage     # prints the results as JSON lines
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import tests.bench.django_ready  # noqa: F401 - sets Django up for the imports below

# isort: split

import django
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from judges.backends import get_backend
from judges.demo import register_simulated_judges
from judges.models import CalibrationRun, Verdict
from judges.services import prompt_prefixes_store
from labelling.demo import demo_gold_load
from labelling.models import GoldSetVersion
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, register_demo_warehouse
from simulator import Simulator, anthropic_message, parse_anthropic

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = 100_000
REPEATS = 5
TARGET_EXTRA_BYTES = 2048


def django_setup():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    django.setup()


def phase_fill(mode: str) -> dict:
    """Migrate the empty database and store VERDICTS verdicts, with (`traced`) or without the trace."""
    django_setup()

    call_command("migrate", verbosity=0)
    warehouse_path = Path(settings.VAR_DIR) / "bench_demo_warehouse.sqlite3"
    build_demo_warehouse(str(warehouse_path))
    catalogue_refresh(warehouse=register_demo_warehouse(str(warehouse_path)))
    demo_gold_load(io.StringIO())
    gold = GoldSetVersion.objects.get(gold_set__name="demo")
    version = register_simulated_judges()[0]  # the Anthropic one
    backend = get_backend(version)
    simulator = Simulator()
    queries = [item.query for item in gold.items.select_related("query__warehouse").order_by("query_id")]
    templates = []
    for query in queries:
        prompt = backend.prompt_for(query)
        request = backend.request(query, prompt)
        parsed = parse_anthropic(request)
        payload = simulator.answer(request["model"], parsed["sql"], parsed["tool"], malformed=False)
        usage = simulator.usage(parsed, payload)
        message = anthropic_message(parsed, payload, usage)
        context = {"backend": "anthropic", "simulated": True}
        context["attempts"] = {"calls": 1, "rate_limited": 0, "retried": 0, "waited_s": 0.0}
        result = backend.result_from(message, latency_ms=812.4, context=context)
        if mode == "traced":
            result.context.update(prompt.context())
            result.context["attempts"]["causes"] = []
            result.context["simulated"] = True
            for name, value in backend.trace_fields(request, prompt).items():
                setattr(result, name, value)
        templates.append((query, result))
    prefix_ids = (
        prompt_prefixes_store(judge_version_id=version.pk, results=[r for _, r in templates])
        if mode == "traced"
        else {}
    )
    size_before = database_bytes(connection)
    per_run = len(queries) * REPEATS
    runs = -(-VERDICTS // per_run)
    stored = 0
    for _ in range(runs):
        run = CalibrationRun.objects.create(gold_set_version=gold, repeats=REPEATS, status="completed")
        batch = []
        for repeat in range(REPEATS):
            for query, result in templates:
                if stored >= VERDICTS:
                    break
                fields = result.verdict_fields()
                if mode != "traced":
                    for name in ("simulated", "endpoint", "catalogue_version", "request_tail"):
                        fields.pop(name)
                batch.append(
                    Verdict(
                        judge_version=version,
                        query=query,
                        run=run,
                        repeat=repeat,
                        prompt_prefix_id=prefix_ids.get(result.prefix_sha256),
                        **fields,
                    )
                )
                stored += 1
        Verdict.objects.bulk_create(batch, batch_size=2000)
    return {"verdicts": Verdict.objects.count(), "bytes": database_bytes(connection) - size_before}


def database_bytes(connection) -> int:
    """The database file's size once compacted (tables and indexes, no free pages)."""
    with connection.cursor() as cursor:
        cursor.execute("VACUUM")
    return os.path.getsize(connection.settings_dict["NAME"])


def fill(mode: str, folder: Path) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder / (mode + '.sqlite3')}",
        "DOCKET_VAR_DIR": str(folder),
        "WAREHOUSES_FILE": str(folder / "warehouses.json"),
    }
    output = subprocess.run(
        [sys.executable, "-m", "tests.bench.bench_verdict_storage", "--phase", "fill", mode],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def run() -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="bench-verdicts-") as tmp:
        folder = Path(tmp)
        baseline = fill("baseline", folder)
        traced = fill("traced", folder)
    per_baseline = baseline["bytes"] / baseline["verdicts"]
    per_traced = traced["bytes"] / traced["verdicts"]
    return [
        {
            "name": "verdict storage: bytes per verdict with the trace beyond the baseline (sqlite, 100k verdicts)",
            "value": round(per_traced - per_baseline, 1),
            "unit": "bytes",
            "target_op": "<=",
            "target": TARGET_EXTRA_BYTES,
        },
        {
            "name": "verdict storage: bytes per verdict with the trace (sqlite, 100k verdicts)",
            "value": round(per_traced, 1),
            "unit": "bytes",
            "target_op": "<=",
            "target": round(per_baseline + TARGET_EXTRA_BYTES, 1),
        },
    ]


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--phase":
        print(json.dumps(phase_fill(sys.argv[3] if sys.argv[2] == "fill" else sys.argv[2])))
    else:
        for line in run():
            print(json.dumps(line))
