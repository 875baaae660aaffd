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
from config.keyset import keyset_rows
from labelling.goldset_parser import ParseOptions, Row, RowParser
from labelling.goldset_records import FIELDS, GoldImportError, csv_records, detect_format, jsonl_records, open_text
from labelling.goldset_writer import BatchWriter, ImportSummary, row_check_in_batch
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Label, LabelDecision, ResolutionPolicy
from labelling.services import goldset_get_or_create, goldset_publish
from labelling.splits import split_parts_get
from labelling.taxonomy import (
    goldset_classes_create,
    goldset_taxonomy,
    goldset_taxonomy_use,
    taxonomy_import,
    taxonomy_index,
)
from labelling.taxonomy_files import TaxonomyFileError, taxonomy_entries_read

# `split`: the item's part of the version's dev/test split (None when the version has none).
EXPORT_FIELDS = [*FIELDS, "metadata", "split"]

BATCH_SIZE = 2000
EXPORT_CHUNK = 5000
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
    taxonomy_file=None,
    taxonomy_name: str | None = None,
    options: ParseOptions | None = None,
) -> GoldSetVersion:
    """Import a gold set file and publish a new version; raise GoldImportError on a bad line.

    The gold set is created if needed, or extended: an id already in it must carry the
    same question and SQL, and each line's label becomes that labeller's (or the import's)
    current label. Several labellers may label one item. `taxonomy_file` creates or extends
    the taxonomy `taxonomy_name` (default: the gold set's name) and makes it the gold set's.
    The new version is published under the `resolve` policy — unless the import changed no
    label and a version exists, which then stays current (`published_now` False). The whole
    file is one transaction: on any error nothing is written. The version returned carries
    `import_summary` (an ImportSummary) and `published_now`.
    """
    options = options or ParseOptions(create_labellers=create_labellers, positive_means=positive_means)
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
    summary = ImportSummary(file=Path(name).name)
    if taxonomy_file is not None:
        _taxonomy_from_file(gold_set, taxonomy_file, taxonomy_name or gold_set_name, summary)
    parser = RowParser(taxonomy=taxonomy_index(goldset_taxonomy(gold_set)), options=options)
    writer = BatchWriter(gold_set, (Label.objects.aggregate(n=Max("id"))["n"] or 0) + 1, summary)
    with open_text(path_or_file) as stream:
        records = jsonl_records(stream) if fmt == "jsonl" else csv_records(stream, on_header=parser.check_header)
        _rows_write(records, parser, writer, summary, progress)
    if summary.records == 0:
        raise GoldImportError(0, "the file has no records (it is empty)")
    _summary_fill(summary, parser)
    if parser.new_classes:
        goldset_classes_create(gold_set=gold_set, names=list(parser.new_classes))
        summary.classes_created = list(parser.new_classes)
    summary.taxonomy = str(goldset_taxonomy(GoldSet.objects.get(pk=gold_set.pk)))
    if writer.deferred_fingerprints:
        transaction.on_commit(
            partial(current_app.send_task, QUERY_FINGERPRINT_FILL_TASK, kwargs={"gold_set_id": gold_set.pk})
        )
    current = GoldSetVersion.objects.filter(gold_set=gold_set).order_by("-number").first()
    if current is not None and not summary.changed_anything:
        # Nothing to publish: a new version would hold the same labels, and the runs stay on this one.
        current.import_summary, current.published_now = summary, False
        return current
    version = goldset_publish(
        gold_set=gold_set, user=user, note=f"import of {Path(name).name}: {summary.describe()}"[:2000], resolve=resolve
    )
    version.import_summary, version.published_now = summary, True
    return version


def _taxonomy_from_file(gold_set: GoldSet, taxonomy_file, taxonomy_name: str, summary: ImportSummary) -> None:
    """Create or extend the taxonomy from its file and make it the gold set's; refuse a bad file."""
    try:
        validate_slug(taxonomy_name)
    except ValidationError:
        raise GoldImportError(0, f"'{taxonomy_name}' is not a valid taxonomy name (letters, digits, - and _)") from None
    try:
        entries = taxonomy_entries_read(taxonomy_file)
        taxonomy, changes = taxonomy_import(name=taxonomy_name, entries=entries)
        goldset_taxonomy_use(gold_set=gold_set, taxonomy=taxonomy)
    except (TaxonomyFileError, ValidationError) as exc:
        message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        raise GoldImportError(0, f"taxonomy: {message}") from None
    summary.taxonomy_changes = changes


def _rows_write(records, parser: RowParser, writer: BatchWriter, summary: ImportSummary, progress) -> None:
    """Parse and write the records a batch at a time; raise at the end for unknown labellers and classes.

    A batch ends between items, never inside one, so that one item's lines (one per class)
    are merged before they are compared with its stored labels.
    """
    by_slot: dict[tuple, Row] = {}
    by_id: dict[str, Row] = {}
    pending: list[Row] = []
    try:
        for line, record in records:
            row = parser.parse(line, record)
            summary.records += 1
            if len(pending) >= BATCH_SIZE and row.external_id != pending[-1].external_id:
                if not parser.has_unknowns:
                    writer.write(pending)
                by_slot, by_id, pending = {}, {}, []
                if progress:
                    progress(line)
            if row_check_in_batch(by_slot, by_id, row, summary):
                by_slot[row.slot] = row
                by_id.setdefault(row.external_id, row)
                pending.append(row)
            else:
                summary.skip("repeated lines")
    except GoldImportError:
        if not parser.has_unknowns:
            writer.check(pending)  # an earlier line of this batch may clash with the gold set
        raise
    _refuse_unknowns(parser)
    writer.write(pending)


def _refuse_unknowns(parser: RowParser) -> None:
    if parser.unknown_labellers:
        names = ", ".join(f"'{n}' (line {line})" for n, line in parser.unknown_labellers.items())
        raise GoldImportError(
            min(parser.unknown_labellers.values()),
            f"unknown labeller{'s' * (len(parser.unknown_labellers) > 1)} {names}:"
            " create them first or import with --create-labellers",
        )
    if parser.unknown_classes:
        names = ", ".join(f"'{n}' (line {line})" for n, line in parser.unknown_classes.items())
        index = parser.taxonomy
        raise GoldImportError(
            min(parser.unknown_classes.values()),
            f"unknown error class{'es' * (len(parser.unknown_classes) > 1)} {names}: taxonomy '{index.name}'"
            f" v{index.version} allows {', '.join(index.active) or 'no class yet'} (and unclassified);"
            " import its taxonomy with --taxonomy FILE, or add the classes with --create-classes",
        )


def _summary_fill(summary: ImportSummary, parser: RowParser) -> None:
    summary.labellers_created = parser.created_labellers
    summary.fields_kept_as_metadata = sorted(parser.kept_fields)
    summary.fields_ignored = sorted(parser.ignored_fields)
    summary.unclassified_wrong = parser.unclassified_wrong


# --- Export -------------------------------------------------------------------------------


def goldset_export_records(*, version: GoldSetVersion) -> Iterator[dict]:
    """Yield a version's items as import records, in query order, each with its part of the version's split."""
    parts = split_parts_get(version)
    items = GoldSetVersionItem.objects.filter(version=version).values_list(
        "query_id",
        "query__external_id",
        "query__question",
        "query__sql",
        "decision",
        "error_class",
        "query__warehouse__name",
        "query__reference_sql",
        "query__metadata",
    )
    # Keyset pages by query id (config/keyset.py): no OFFSET, no cursor held open.
    rows = keyset_rows(items, ("query_id",), chunk=EXPORT_CHUNK, key=lambda row: (row[0],))
    for query_id, external_id, question, sql, decision, error_class, warehouse, reference_sql, metadata in rows:
        yield {
            "id": external_id,
            "question": question,
            "sql": sql,
            "label": decision,
            "error_class": error_class or None,
            "warehouse": warehouse or None,
            "labeller": None,
            "reference_sql": reference_sql or None,
            "metadata": metadata or None,
            "split": parts.get(query_id),
        }


def goldset_export_lines(*, version: GoldSetVersion, fmt: str) -> Iterator[str]:
    """Yield the export of a version line by line (streamable); CSV cells are neutralised."""
    if fmt == "jsonl":
        for record in goldset_export_records(version=version):
            yield json.dumps(record, ensure_ascii=False) + "\n"
        return
    yield from csv_lines(
        EXPORT_FIELDS,
        ([_csv_cell(record[name]) for name in EXPORT_FIELDS] for record in goldset_export_records(version=version)),
    )


def _csv_cell(value):
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, dict) else value


def goldset_export(*, version: GoldSetVersion, fmt: str, out) -> int:
    """Write a version to the text stream `out` as JSONL or CSV; return the items written."""
    fmt = detect_format("", fmt)
    count = 0
    for line in goldset_export_lines(version=version, fmt=fmt):
        out.write(line)
        count += 1
    return count - (1 if fmt == "csv" else 0)
