"""CSV and JSON downloads of the dashboard's tables: judges, pairs, ensembles.

The numbers come from `judges.report`, as on the dashboard and in `judge_report`, read with
the same GET parameters as the dashboard (`generation_cost`, `baseline`, `fr_ceiling` and the
run selection `runs`, `since`, `until`), so
a download shows what the page shows. CSV cells are neutralised (`config.exports`).
"""

from django.http import Http404, JsonResponse

from config.exports import csv_response, json_response, records_csv_response
from config.roles import VIEW_JUDGES, permission_required
from judges.dashboard_request import SelectionError, load_for
from judges.report import ensembles_up_to
from judges.report_tables import report_csv_table

TABLES = ("judges", "pairs", "ensembles")
FORMATS = ("csv", "json")


def _columns(records: list[dict]) -> list[str]:
    columns: list[str] = []
    for record in records:
        columns += [key for key in record if key not in columns]
    return columns


def table_records(version_id: int, table: str, request) -> tuple[dict, list[dict]]:
    """Return the report and the rows of one dashboard table, loaded exactly as the dashboard loads them."""
    data, report, options = load_for(version_id, request)
    if table == "judges":
        return report, report["judges"]
    if table == "pairs":
        return report, report["pairs"]
    points = ensembles_up_to(
        data, generation_cost_usd=options.generation_cost_usd, false_reject_ceiling=options.false_reject_ceiling
    )
    return report, [{**point, "members": " + ".join(point["members"])} for point in points]


@permission_required(VIEW_JUDGES)
def dashboard_table_export(request, version_id: int, table: str, fmt: str):
    """Download one of the dashboard's tables (judges, pairs, ensembles) as CSV or JSON."""
    if table not in TABLES or fmt not in FORMATS:
        raise Http404("Export judges, pairs or ensembles as .csv or .json.")
    try:
        report, records = table_records(version_id, table, request)
    except SelectionError as error:
        return JsonResponse({"error": str(error)}, status=400)
    stem = f"{report['gold_set']}-v{report['version']}-{table}"
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
