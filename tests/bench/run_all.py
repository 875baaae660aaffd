"""Run every benchmark under tests/bench/ and print one line per result.

Each `bench_*.py` module exposes `run() -> list[dict]` with keys name, value, unit, and
for a result with a target target_op ("<=" / ">=" / "<" / ">") and target. Lines read
`<name> <value> <unit> (target <op> <value>)`, or `<name> <value> <unit> (informational)`
for a measurement without a target; the summary `N met, M missed` counts only targets.
It measures, it does not gate: the exit code is 0 even when a target is missed, and
non-zero only when a benchmark itself crashed.
"""

import importlib
import operator
import os
import pkgutil
import re
import sys
import traceback
from pathlib import Path

import django

OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


def format_value(value: float) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def metric_name(name: str) -> str:
    """Make a benchmark's name one token, so each line splits into name, value and unit."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def result_line(result: dict) -> tuple[str, bool | None]:
    """Return the result's line and whether it met its target (None: informational, no target)."""
    if result.get("target_op") is None or result.get("target") is None:
        line = f"{metric_name(result['name'])} {format_value(result['value'])} {result['unit'].replace(' ', '_')}"
        return line + " (informational)", None
    met = OPS[result["target_op"]](result["value"], result["target"])
    line = (
        f"{metric_name(result['name'])} {format_value(result['value'])} {result['unit'].replace(' ', '_')} "
        f"(target {result['target_op']} {format_value(result['target'])})"
        f"{'' if met else '  MISSED'}"
    )
    return line, met


def bench_modules(only: set[str] | None = None):
    here = Path(__file__).parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if info.name.startswith("bench_") and (not only or info.name in only):
            yield info.name


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    django.setup()
    only = set(argv[1:]) or None
    met = missed = crashed = informational = 0
    for name in bench_modules(only):
        try:
            module = importlib.import_module(f"tests.bench.{name}")
            results = module.run()
        except Exception:  # noqa: BLE001 - report and go on with the other benchmarks
            crashed += 1
            print(f"{name} CRASHED", flush=True)
            traceback.print_exc()
            continue
        for result in results:
            line, ok = result_line(result)
            print(line, flush=True)
            if ok is None:
                informational += 1
                continue
            met, missed = met + ok, missed + (not ok)
    print(
        f"{met} met, {missed} missed"
        + (f", {crashed} crashed" if crashed else "")
        + (f" ({informational} informational, not counted)" if informational else "")
    )
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
