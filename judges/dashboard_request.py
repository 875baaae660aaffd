"""What the dashboard's query string asks for, and the report it loads: read once for every page.

`judges/dashboard_views.py` and the CSV download (`judges/export_views.py`) both load through
`load_for` (the arrays and the report) or `data_for` (the arrays alone: the htmx partials), both
from `judges.calibration_cache`, so a partial after the page costs no load unless a verdict was
added; a malformed run selection raises `SelectionError`, which the pages answer with 400.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlencode

import numpy as np
from django.shortcuts import get_object_or_404

from judges.calibration_cache import calibration_cached
from judges.calibration_data import CalibrationData
from judges.report import report_from_data
from judges.run_selection import RunSelection, run_selection_parse
from labelling.models import GoldSetVersion
from labelling.split_models import SPLIT_ALL, SPLIT_CHOICES
from labelling.splits import split_part_check

SELECTION_PARAMS = ("runs", "since", "until", "source")  # "slice" and "min_slice" add a table, not a selection


class SelectionError(ValueError):
    """The run selection in the query string cannot be used."""


@dataclass(frozen=True)
class ReportOptions:
    """What the page's GET parameters ask for, validated."""

    generation_cost_usd: float = 0.0
    baseline: str | None = None
    false_reject_ceiling: float = 0.2
    selection: RunSelection = RunSelection()
    # Which part of the version's dev/test split (labelling.splits): dev, test or all.
    split: str = SPLIT_ALL

    @classmethod
    def from_request(cls, request) -> ReportOptions:
        """Read the options; raise SelectionError when the run selection is malformed."""
        try:
            selection = run_selection_parse(**{name: request.GET.get(name) for name in SELECTION_PARAMS})
        except ValueError as exc:
            raise SelectionError(str(exc)) from exc
        split = request.GET.get("split") or SPLIT_ALL
        if split not in SPLIT_CHOICES:
            raise SelectionError(f"split must be one of {', '.join(SPLIT_CHOICES)}; got {split!r}")
        return cls(
            generation_cost_usd=bounded_float(request.GET.get("generation_cost"), 0.0, 0.0, 100.0),
            baseline=request.GET.get("baseline") or None,
            false_reject_ceiling=bounded_float(request.GET.get("fr_ceiling"), 0.2, 0.0, 1.0),
            selection=selection,
            split=split,
        )


def bounded_float(raw, default: float, low: float, high: float) -> float:
    """Parse a float from a query string, falling back to the default when absent or bad."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return default
    return min(max(value, low), high) if np.isfinite(value) else default


def selection_query(request) -> str:
    """Return the run-selection part of the query string (and the split), for the page's own requests."""
    return urlencode({name: request.GET[name] for name in (*SELECTION_PARAMS, "split") if request.GET.get(name)})


def data_for(version_id: int, request) -> tuple[CalibrationData, ReportOptions]:
    """Return the selection's arrays (one load per selection, reused while no verdict is added) and the options.

    Raises SelectionError when the run selection is malformed or names runs not on the version.
    """
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=version_id)
    options = ReportOptions.from_request(request)
    try:
        split_part_check(version, options.split)
        data = calibration_cached(gold_set_version=version, selection=options.selection, split=options.split)
    except ValueError as exc:
        raise SelectionError(str(exc)) from exc
    return data, options


def load_for(version_id: int, request) -> tuple[CalibrationData, dict, ReportOptions]:
    """Load the version's arrays and report; drop an unknown baseline rather than fail.

    Raises SelectionError when the run selection is malformed or names runs not on the version.
    """
    data, options = data_for(version_id, request)
    try:
        report = report_from_data(data, generation_cost_usd=options.generation_cost_usd, baseline=options.baseline)
    except ValueError:
        options = replace(options, baseline=None)
        report = report_from_data(data, generation_cost_usd=options.generation_cost_usd)
    return data, report, options
