"""One percentile for the product: `judges.metrics.percentile` (linear between closest ranks).

The triage dashboard's queue times once used a hand-written nearest-rank percentile while
latencies and intervals used numpy's linear one; the same numbers gave two p50s.
"""

import ast
from pathlib import Path

import numpy as np
import pytest

from judges.metrics import latency_percentiles, percentile

ROOT = Path(__file__).resolve().parents[2]
APPS = ("config", "labelling", "judges", "probes", "triage")
PERCENTILE_CALLS = {"percentile", "nanpercentile", "quantile", "nanquantile", "quantiles", "median"}


def percentile_calls_outside_metrics() -> list[str]:
    """Return "path:line" of every call named like a percentile in product code, but metrics'."""
    found = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            relative = path.relative_to(ROOT)
            if "tests" in relative.parts or "migrations" in relative.parts or relative == Path("judges/metrics.py"):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                called = node.func if isinstance(node, ast.Call) else None
                through_metrics = isinstance(called, ast.Attribute) and getattr(called.value, "id", "") == "metrics"
                if isinstance(called, ast.Attribute) and called.attr in PERCENTILE_CALLS and not through_metrics:
                    found.append(f"{relative}:{node.lineno}")
    return found


def test_no_product_module_computes_a_percentile_but_metrics():
    assert percentile_calls_outside_metrics() == []


def test_the_percentile_is_linear_between_ranks_and_leaves_unmeasured_values_out():
    assert percentile([10, 20, 30, 40], 50) == 25.0
    assert percentile([10, 20, 30, 40, np.nan], [50, 90]) == [25.0, pytest.approx(37.0)]
    assert percentile([], 50) is None and percentile([np.nan], 50) is None
    assert latency_percentiles(np.array([100.0, 300.0])) == (200.0, pytest.approx(290.0))
