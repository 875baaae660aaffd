"""Import and export of gold sets: JSONL or CSV, streamed, one transaction per import.

The import reads the file a batch at a time (never the whole file; `goldset_records`),
writes with bulk inserts (`goldset_writer`), and stops at the first bad line with
"line N: reason", leaving the database as it was. It then publishes a new version under a
resolution policy (manual, majority or unanimous-only). One file may carry several
labellers' labels of the same item.
"""

import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from celery import current_app
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction
from django.db.models import Max

from config.exports import csv_lines
from labelling.goldset_records import (
    FIELDS,
    GoldImportError,
    Row,
    RowParser,
    csv_records,
    detect_format,
    jsonl_records,
    open_text,
)
from labelling.goldset_writer import BatchWriter, ImportSummary, row_check_in_batch
from labelling.models import GoldSetVersion, GoldSetVersionItem, Label, LabelDecision, ResolutionPolicy
from labelling.services import goldset_get_or_create, goldset_publish

BATCH_SIZE = 2000
# Looked up by name, not imported: tasks import services, never the reverse.
QUERY_FINGERPRINT_FILL_TASK = "labelling.query_fingerprint_fill"


@transaction.atomic
def goldset_import(
    *,
    path_or_file,
    gold_set_name: str,
    fmt: str | None = None,
    user=None,
    progress: Callable[[int], None] | None = None,
    create_labellers: bool = False,
    positive_means: str = LabelDecision.CORRECT,
    resolve: str = ResolutionPolicy.MANUAL,
) -> GoldSetVersion:
    """Import a gold set file and publish a new version; raise GoldImportError on a bad line.

    The gold set is created if needed, or extended: an id already in it must carry the
    same question and SQL, and each line's label becomes that labeller's (or the import's)
    current label. Several labellers may label one item. The new version is published
    under the `resolve` policy. The whole file is one transaction: on any error nothing is
    written. The version returned carries `import_summary` (an ImportSummary).
    """
    name = getattr(path_or_file, "name", str(path_or_file))
    fmt = detect_format(name, fmt)
    try:
        validate_slug(gold_set_name)
    except ValidationError:
        raise GoldImportError(
            0, f"'{gold_set_name}' is not a valid gold set name (letters, digits, - and _ only)"
        ) from None
    if resolve not in ResolutionPolicy.values:
        raise GoldImportError(0, f"unknown resolution policy '{resolve}': use {', '.join(ResolutionPolicy.values)}")
    gold_set = goldset_get_or_create(name=gold_set_name)
    first_new_label_id = (Label.objects.aggregate(n=Max("id"))["n"] or 0) + 1
    summary = ImportSummary(file=Path(name).name)
    writer = BatchWriter(gold_set, first_new_label_id, summary)
    parser = RowParser(create_labellers=create_labellers, positive_means=positive_means)
    by_slot: dict[tuple, Row] = {}
    by_id: dict[str, Row] = {}
    pending: list[Row] = []
    with open_text(path_or_file) as stream:
        records = jsonl_records(stream) if fmt == "jsonl" else csv_records(stream)
        try:
            for line, record in records:
                row = parser.parse(line, record)
                summary.records += 1
                if row_check_in_batch(by_slot, by_id, row):
                    by_slot[row.slot] = row
                    by_id.setdefault(row.external_id, row)
                    pending.append(row)
                else:
                    summary.skip("repeated lines")
                if len(pending) >= BATCH_SIZE:
                    if not parser.unknown_labellers:
                        writer.write(pending)
                    by_slot, by_id, pending = {}, {}, []
                    if progress:
                        progress(line)
        except GoldImportError:
            if not parser.unknown_labellers:
                writer.check(pending)  # an earlier line of this batch may clash with the gold set
            raise
        if parser.unknown_labellers:
            names = ", ".join(f"'{n}' (line {line})" for n, line in parser.unknown_labellers.items())
            first_line = min(parser.unknown_labellers.values())
            raise GoldImportError(
                first_line,
                f"unknown labeller{'s' * (len(parser.unknown_labellers) > 1)} {names}:"
                " create them first or import with --create-labellers",
            )
        writer.write(pending)
    if summary.records == 0:
        raise GoldImportError(0, "the file has no records (it is empty)")
    summary.labellers_created = parser.created_labellers
    if writer.deferred_fingerprints:
        transaction.on_commit(
            partial(current_app.send_task, QUERY_FINGERPRINT_FILL_TASK, kwargs={"gold_set_id": gold_set.pk})
        )
    version = goldset_publish(
        gold_set=gold_set, user=user, note=f"import of {Path(name).name}: {summary.describe()}", resolve=resolve
    )
    version.import_summary = summary
    return version


# --- Export -------------------------------------------------------------------------------


def goldset_export_records(*, version: GoldSetVersion) -> Iterator[dict]:
    """Yield a version's items as import records, in query order."""
    rows = (
        GoldSetVersionItem.objects.filter(version=version)
        .order_by("query_id")
        .values_list(
            "query__external_id",
            "query__question",
            "query__sql",
            "decision",
            "error_class",
            "query__warehouse__name",
            "query__reference_sql",
        )
        .iterator(chunk_size=5000)
    )
    for external_id, question, sql, decision, error_class, warehouse, reference_sql in rows:
        yield {
            "id": external_id,
            "question": question,
            "sql": sql,
            "label": decision,
            "error_class": error_class or None,
            "warehouse": warehouse or None,
            "labeller": None,
            "reference_sql": reference_sql or None,
        }


def goldset_export_lines(*, version: GoldSetVersion, fmt: str) -> Iterator[str]:
    """Yield the export of a version line by line (streamable); CSV cells are neutralised."""
    if fmt == "jsonl":
        for record in goldset_export_records(version=version):
            yield json.dumps(record, ensure_ascii=False) + "\n"
        return
    yield from csv_lines(
        FIELDS, ([record[name] for name in FIELDS] for record in goldset_export_records(version=version))
    )


def goldset_export(*, version: GoldSetVersion, fmt: str, out) -> int:
    """Write a version to the text stream `out` as JSONL or CSV; return the items written."""
    fmt = detect_format("", fmt)
    count = 0
    for line in goldset_export_lines(version=version, fmt=fmt):
        out.write(line)
        count += 1
    return count - (1 if fmt == "csv" else 0)
