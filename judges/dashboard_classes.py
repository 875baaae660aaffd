"""What the dashboard shows of error classes beyond the chart: categories, class guesses, slices.

Display glue only: the figures are the report's (`judges.report`: per category, class accuracy,
unmapped guesses, `slices_report`) and the class × guess table is `judges.class_guesses`.
"""

from __future__ import annotations

from config.params import number_param
from judges.calibration_data import CalibrationData
from judges.class_guesses import class_data_ensure, guess_confusion
from judges.report import slices_report
from judges.slices import MIN_SLICE
from labelling.selectors import version_metadata_keys


def category_rows(report: dict) -> list[dict]:
    """Return one row per category: each judge's catch rate and interval on its items."""
    categories = sorted({name for judge in report["judges"] for name in judge["catch_rate_by_category"]})
    return [
        {
            "category": name,
            "cells": [
                (judge["catch_rate_by_category"].get(name), judge["catch_rate_by_category_ci95"].get(name))
                for judge in report["judges"]
            ],
        }
        for name in categories
    ]


def guess_sections(data: CalibrationData, report: dict) -> list[dict]:
    """Return, per judge that named classes, its class accuracy, unmapped guesses and class × guess table."""
    class_data_ensure(data)
    sections = []
    for column, (judge, entry) in enumerate(zip(data.judges, report["judges"], strict=True)):
        confusion = guess_confusion(data, data.guesses, column)
        if entry["class_accuracy"] is None and not confusion["rows"]:
            continue
        sections.append({"judge": judge, "entry": entry, "confusion": confusion})
    return sections


def slice_view(data: CalibrationData, report: dict, request) -> dict:
    """Return the "Slice by" control's keys and, when a key is chosen, every judge's figures per value."""
    keys = version_metadata_keys(version=data.gold_set_version)
    key = request.GET.get("slice") or ""
    min_items = number_param(request.GET.get("min_slice")) or MIN_SLICE
    view = {"keys": keys, "key": key, "min_items": min_items, "slices": None}
    if key:
        view["slices"] = slices_report(
            data,
            key,
            min_items=max(1, min_items),
            generation_cost_usd=report["generation_cost_usd"],
            baseline=report["baseline"],
        )
    return view
