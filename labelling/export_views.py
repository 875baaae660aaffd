"""Downloads of the labelling app: versions, agreement figures, disagreements, browsed items.

Every download here shows labels (final labels are made of them), so each is for ML
engineers and admins only; a labeller gets 403 (`labelling.blind`). A download that shows
items' labels records the reveal for whoever downloads it.
"""

from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from config.exports import csv_response, json_records_response, json_response, records_csv_response
from config.roles import MANAGE_GOLDSETS, permission_required
from labelling import selectors
from labelling.agreement_report import agreement_report, agreement_rows, disagreement_rows
from labelling.blind import label_reveals_record
from labelling.goldset_io import goldset_export_lines
from labelling.lookups import agreement_scope, frozen_version
from labelling.models import GoldSetVersion, GoldSetVersionItem

ITEM_COLUMNS = ["id", "question", "sql", "label", "error_class"]
LABEL_COLUMNS = ["labeller", "labeller_label", "labeller_error_class", "label_source", "current", "labelled_at"]


@permission_required(MANAGE_GOLDSETS)
def version_export(request, pk, fmt):
    """Download a version as JSONL or CSV, streamed."""
    if fmt not in ("jsonl", "csv"):
        raise Http404("Export as .jsonl or .csv.")
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=pk, is_frozen=True)
    items = GoldSetVersionItem.objects.filter(version=version).values_list("query_id", flat=True)
    label_reveals_record(user=request.user, query_ids=items, shown_on="version_export")
    content_type = "application/x-ndjson" if fmt == "jsonl" else "text/csv"
    response = StreamingHttpResponse(
        goldset_export_lines(version=version, fmt=fmt), content_type=f"{content_type}; charset=utf-8"
    )
    filename = f"{version.gold_set.name}-v{version.number}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@permission_required(MANAGE_GOLDSETS)
def agreement_export(request, name, fmt):
    """Download the agreement figures (the same dict as `agreement_report --format json`)."""
    gold_set, version = agreement_scope(request, name)
    report = agreement_report(gold_set=gold_set, version=version)
    stem = f"{gold_set.name}-agreement" + (f"-v{version.number}" if version else "")
    if fmt == "json":
        return json_response(f"{stem}.json", report)
    if fmt == "csv":
        return csv_response(f"{stem}.csv", *agreement_rows(report))
    raise Http404("Export as .json or .csv.")


@permission_required(MANAGE_GOLDSETS)
def disagreements_export(request, name, fmt):
    """Download the items whose labellers disagree, with their labels and adjudication."""
    gold_set, version = agreement_scope(request, name)
    rows = disagreement_rows(gold_set=gold_set, version=version)
    label_reveals_record(user=request.user, query_ids=[row["query"].pk for row in rows], shown_on="disagreements")
    records = [
        {
            "id": row["query"].external_id,
            "question": row["query"].question,
            "labels": dict(row["ratings"]),
            "adjudication": (
                f"{row['adjudication'].decision} {row['adjudication'].error_class}".strip()
                if row["adjudication"]
                else None
            ),
            "adjudication_reason": row["adjudication"].reason if row["adjudication"] else None,
        }
        for row in rows
    ]
    stem = f"{gold_set.name}-disagreements"
    if fmt == "json":
        return json_response(f"{stem}.json", records)
    if fmt == "csv":
        columns = ["id", "question", "labels", "adjudication", "adjudication_reason"]
        return records_csv_response(f"{stem}.csv", columns, records)
    raise Http404("Export as .json or .csv.")


@permission_required(MANAGE_GOLDSETS)
def version_items_export(request, name, number, fmt):
    """Download the (filtered) items of a version with every label: JSON nested, CSV a row per label."""
    version = frozen_version(name, number)
    labellers = selectors.version_labeller_names(version=version)
    filters = selectors.version_item_filter(version=version, params=request.GET, labellers=labellers)
    shown = selectors.version_item_list(filters=filters).values_list("query_id", flat=True)
    label_reveals_record(user=request.user, query_ids=shown, shown_on="items_export")
    records = selectors.version_item_record_list(filters=filters)
    stem = f"{version.gold_set.name}-v{version.number}-items"
    if fmt == "json":
        return json_records_response(f"{stem}.json", records)
    if fmt != "csv":
        raise Http404("Export as .json or .csv.")

    def rows():
        for record in records:
            item = [record[name] for name in ITEM_COLUMNS]
            for label in record["labels"] or [{}]:
                yield [
                    *item,
                    label.get("labeller"),
                    label.get("label"),
                    label.get("error_class"),
                    label.get("source"),
                    label.get("current"),
                    label.get("at"),
                    "; ".join(
                        f"{a['label']} {a['error_class'] or ''} by {a['adjudicator']}" for a in record["adjudications"]
                    ),
                ]

    return csv_response(f"{stem}.csv", [*ITEM_COLUMNS, *LABEL_COLUMNS, "adjudications"], rows())
