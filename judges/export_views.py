"""CSV and JSON downloads of the dashboard's tables: judges, pairs, ensembles.

The numbers come from `judges.report`, as on the dashboard and in `judge_report`, read with
the same GET parameters as the dashboard (`generation_cost`, `baseline`, `fr_ceiling`), so
a download shows what the page shows. CSV cells are neutralised (`config.exports`).
"""

import math

from django.http import Http404
from django.shortcuts import get_object_or_404

from config.exports import csv_response, json_response, records_csv_response
from config.roles import ML_ENGINEER, role_required
from judges.management.commands.judge_report import report_csv_table
from judges.report import ensembles_up_to, load_calibration, report_from_data
from labelling.models import GoldSetVersion

TABLES = ("judges", "pairs", "ensembles")
FORMATS = ("csv", "json")


def _bounded(raw, default: float, low: float, high: float) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return default
    return min(max(value, low), high) if math.isfinite(value) else default


def _columns(records: list[dict]) -> list[str]:
    columns: list[str] = []
    for record in records:
        columns += [key for key in record if key not in columns]
    return columns


def table_records(version: GoldSetVersion, table: str, params) -> tuple[dict, list[dict]]:
    """Return the report and the rows of one dashboard table, computed as the dashboard does."""
    generation_cost = _bounded(params.get("generation_cost"), 0.0, 0.0, 100.0)
    ceiling = _bounded(params.get("fr_ceiling"), 0.2, 0.0, 1.0)
    data = load_calibration(gold_set_version=version)
    try:
        report = report_from_data(data, generation_cost_usd=generation_cost, baseline=params.get("baseline") or None)
    except ValueError:  # an unknown baseline is dropped, as on the page
        report = report_from_data(data, generation_cost_usd=generation_cost)
    if table == "judges":
        return report, report["judges"]
    if table == "pairs":
        return report, report["pairs"]
    points = ensembles_up_to(data, generation_cost_usd=generation_cost, false_reject_ceiling=ceiling)
    return report, [{**point, "members": " + ".join(point["members"])} for point in points]


@role_required(ML_ENGINEER)
def dashboard_table_export(request, version_id: int, table: str, fmt: str):
    """Download one of the dashboard's tables (judges, pairs, ensembles) as CSV or JSON."""
    if table not in TABLES or fmt not in FORMATS:
        raise Http404("Export judges, pairs or ensembles as .csv or .json.")
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=version_id)
    report, records = table_records(version, table, request.GET)
    stem = f"{version.gold_set.name}-v{version.number}-{table}"
    if fmt == "json":
        return json_response(
            f"{stem}.json",
            {
                "gold_set": report["gold_set"],
                "version": report["version"],
                "left_out": report["left_out"],
                table: records,
            },
        )
    if table == "judges":
        return judges_csv_response(f"{stem}.csv", report)
    return records_csv_response(f"{stem}.csv", _columns(records), records)


def judges_csv_response(filename: str, report: dict):
    """The judges table exactly as `judge_report --format csv` writes it."""
    return csv_response(filename, *report_csv_table(report))
