"""CSV and JSON downloads of the triage queue and the resolved items: every item, streamed.

The pages show a page (the queue) or the latest 200 (resolved); a download holds them all,
in the same order, read from the database in chunks as the response is sent.
"""

from collections.abc import Iterable

from django.http import Http404

from config.exports import json_records_response, records_csv_response
from config.roles import VIEW_TRIAGE, permission_required
from triage import selectors
from triage.filters import ResolvedFilter

QUEUE_COLUMNS = [
    "id",
    "external_id",
    "question",
    "sql",
    "warehouse",
    "probe_confirmed",
    "judges_agreeing",
    "judges_answered",
    "error_class_guess",
    "flagged_because",
    "created_at",
    "sla_breached",
]
RESOLVED_COLUMNS = [
    "id",
    "external_id",
    "question",
    "sql",
    "resolution",
    "resolution_error_class",
    "resolution_note",
    "resolved_by",
    "resolved_at",
    "time_spent_s",
]


def _common(item) -> dict:
    return {
        "id": item.pk,
        "external_id": item.query.external_id,
        "question": item.query.question,
        "sql": item.query.sql,
    }


def _respond(stem: str, fmt: str, columns: list[str], records: Iterable[dict]):
    if fmt == "json":
        return json_records_response(f"{stem}.json", records)
    if fmt == "csv":
        return records_csv_response(f"{stem}.csv", columns, records)
    raise Http404("Export as .csv or .json.")


@permission_required(VIEW_TRIAGE)
def queue_export(request, fmt: str):
    """Download the whole claimable queue in its order, with the page's filters."""
    records = (
        {
            **_common(item),
            "warehouse": item.query.warehouse.name if item.query.warehouse else None,
            "probe_confirmed": item.probe_confirmed,
            "judges_agreeing": item.judges_agreeing,
            "judges_answered": item.judges_answered,
            "error_class_guess": item.error_class_guess,
            "flagged_because": item.flagged_because,
            "created_at": item.created_at.isoformat(),
            "sla_breached": item.sla_breached,
        }
        for item in selectors.queue_items(params=request.GET)
    )
    return _respond("triage-queue", fmt, QUEUE_COLUMNS, records)


@permission_required(VIEW_TRIAGE)
def resolved_export(request, fmt: str):
    """Download every resolved item the page's filters keep, newest first (the page lists the latest 200)."""
    filtered = ResolvedFilter(request.GET, queryset=selectors.resolved_queryset())
    records = (
        {
            **_common(item),
            "resolution": item.resolution,
            "resolution_error_class": item.resolution_error_class,
            "resolution_note": item.resolution_note,
            "resolved_by": item.resolved_by.username if item.resolved_by else None,
            "resolved_at": item.resolved_at.isoformat() if item.resolved_at else None,
            "time_spent_s": item.time_spent_s,
        }
        for item in selectors.resolved_items_all(queryset=filtered.qs)
    )
    return _respond("triage-resolved", fmt, RESOLVED_COLUMNS, records)
