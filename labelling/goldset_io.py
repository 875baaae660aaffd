"""Import and export of gold sets: JSONL or CSV, streamed, one transaction per import.

One record per line (JSONL) or row (CSV) with the fields of FIELDS; `warehouse`,
`labeller` and `reference_sql` are optional. The import reads the file a batch at a
time (never the whole file), writes with bulk inserts, and stops at the first bad line
with "line N: reason", leaving the database as it was. It then publishes a new version.
"""

import contextlib
import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from labelling.bulk import db_value, insert_rows
from labelling.models import (
    ErrorClass,
    GoldSet,
    GoldSetVersion,
    GoldSetVersionItem,
    Label,
    LabelDecision,
    LabelSource,
    Query,
    QuerySource,
)
from labelling.services import goldset_get_or_create, goldset_publish, overlap_key_for
from probes.fingerprint import sql_fingerprint

FIELDS = ["id", "question", "sql", "label", "error_class", "warehouse", "labeller", "reference_sql"]
REQUIRED = ["id", "question", "sql", "label"]
BATCH_SIZE = 2000
# Fingerprinting (sqlglot parse + render) costs ~2-5 ms a query, two minutes for 50,000
# items: an import fingerprints its first items at once and leaves the rest to the task
# `labelling.query_fingerprint_fill`, enqueued when the import commits.
INLINE_FINGERPRINT_LIMIT = 2000
QUERY_FIELDS = [
    "question",
    "sql",
    "dialect",
    "warehouse",
    "source",
    "gold_set",
    "external_id",
    "fingerprint",
    "reference_sql",
    "metadata",
    "created_at",
    "label_count",
    "overlap_key",
    "wants_second_label",
]
LABEL_FIELDS = ["query", "labeller", "decision", "error_class", "note", "source", "is_current", "created_at"]


class GoldImportError(Exception):
    """A bad line in an import file: the import stops and writes nothing."""

    def __init__(self, line: int, reason: str):
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


@dataclass
class Row:
    line: int
    external_id: str
    question: str
    sql: str
    decision: str
    error_class: str
    warehouse_id: int | None
    dialect: str
    labeller_id: int | None
    reference_sql: str

    @property
    def label(self) -> tuple[str, str]:
        return (self.decision, self.error_class)


# --- Reading --------------------------------------------------------------------------------


def detect_format(name: str, fmt: str | None) -> str:
    if fmt:
        if fmt not in ("jsonl", "csv"):
            raise ValueError(f"Unknown format '{fmt}': use jsonl or csv.")
        return fmt
    return "csv" if str(name).lower().endswith(".csv") else "jsonl"


@contextlib.contextmanager
def open_text(path_or_file):
    """Yield a text stream over a path, an uploaded/binary file or a text file, without reading it all."""
    if isinstance(path_or_file, str | Path):
        # utf-8-sig: spreadsheets often start a CSV with a byte-order mark.
        with open(path_or_file, encoding="utf-8-sig", newline="") as stream:
            yield stream
        return
    if isinstance(path_or_file, io.TextIOBase):
        yield path_or_file
        return
    raw = getattr(path_or_file, "file", path_or_file)  # Django's UploadedFile wraps the real file
    if hasattr(raw, "seek"):
        raw.seek(0)
    wrapper = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
    try:
        yield wrapper
    finally:
        wrapper.detach()  # leave the caller's file open


def _jsonl_records(stream) -> Iterator[tuple[int, dict]]:
    line = 0
    try:
        for line, text in enumerate(stream, start=1):  # noqa: B007 - line is read after a decode error
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise GoldImportError(line, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(record, dict):
                raise GoldImportError(line, "expected a JSON object")
            yield line, record
    except UnicodeDecodeError:
        raise GoldImportError(line + 1, "not UTF-8 text") from None


def _csv_records(stream) -> Iterator[tuple[int, dict]]:
    reader = csv.reader(stream, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [name.strip() for name in header]
        missing = [name for name in REQUIRED if name not in header]
        if missing:
            raise GoldImportError(1, f"missing column {', '.join(repr(m) for m in missing)} in the header")
        last_line = reader.line_num
        for row in reader:
            start = last_line + 1
            last_line = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(header):
                raise GoldImportError(start, f"expected {len(header)} fields, found {len(row)}")
            yield start, {name: (value if value != "" else None) for name, value in zip(header, row, strict=True)}
    except csv.Error as exc:
        raise GoldImportError(reader.line_num, f"bad CSV ({exc})") from None
    except UnicodeDecodeError:
        raise GoldImportError(reader.line_num + 1, "not UTF-8 text") from None


class RowParser:
    """Validate records into Rows, resolving warehouse and labeller names once each."""

    def __init__(self):
        self.warehouses: dict[str, tuple[int, str]] = {}
        self.labellers: dict[str, int] = {}

    def text(self, line, record, name, required):
        value = record.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise GoldImportError(line, f"missing field '{name}'")
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise GoldImportError(line, f"field '{name}' must be text")
        return str(value)

    def warehouse(self, line, name):
        if name not in self.warehouses:
            from probes.models import Warehouse

            found = Warehouse.objects.filter(name=name).values_list("id", "dialect").first()
            if found is None:
                raise GoldImportError(line, f"unknown warehouse '{name}'")
            self.warehouses[name] = found
        return self.warehouses[name]

    def labeller(self, line, username):
        if username not in self.labellers:
            found = get_user_model().objects.filter(username=username).values_list("id", flat=True).first()
            if found is None:
                raise GoldImportError(line, f"unknown labeller '{username}'")
            self.labellers[username] = found
        return self.labellers[username]

    def parse(self, line: int, record: dict) -> Row:
        values = {name: self.text(line, record, name, name in REQUIRED) for name in FIELDS}
        decision, error_class = values["label"], values["error_class"]
        if decision not in (LabelDecision.CORRECT, LabelDecision.WRONG):
            raise GoldImportError(line, f"label must be 'correct' or 'wrong', not '{decision}'")
        if decision == LabelDecision.WRONG and not error_class:
            raise GoldImportError(line, "a wrong label needs an error_class")
        if error_class and error_class not in ErrorClass.values:
            raise GoldImportError(line, f"unknown error class '{error_class}'")
        if decision == LabelDecision.CORRECT and error_class:
            raise GoldImportError(line, f"a correct label cannot carry error_class '{error_class}'")
        warehouse_id, dialect = self.warehouse(line, values["warehouse"]) if values["warehouse"] else (None, "sqlite")
        labeller_id = self.labeller(line, values["labeller"]) if values["labeller"] else None
        return Row(
            line=line,
            external_id=values["id"],
            question=values["question"],
            sql=values["sql"],
            decision=decision,
            error_class=error_class,
            warehouse_id=warehouse_id,
            dialect=dialect,
            labeller_id=labeller_id,
            reference_sql=values["reference_sql"],
        )


# --- Writing ------------------------------------------------------------------------------


class BatchWriter:
    """Write batches of rows: new queries, superseding labels, label counts; checks duplicates."""

    def __init__(self, gold_set: GoldSet, first_new_label_id: int):
        self.gold_set = gold_set
        self.first_new_label_id = first_new_label_id
        self.written = 0
        self.fingerprinted = 0
        self.deferred_fingerprints = 0
        self.now = timezone.now()

    def fingerprints(self, rows: list[Row]) -> list[str]:
        """Fingerprint the first INLINE_FINGERPRINT_LIMIT new items now; leave the rest to a task."""
        inline = max(0, INLINE_FINGERPRINT_LIMIT - self.fingerprinted)
        result = [sql_fingerprint(row.sql, row.dialect) for row in rows[:inline]]
        self.fingerprinted += len(result)
        self.deferred_fingerprints += len(rows) - len(result)
        return result + [""] * (len(rows) - len(result))

    def existing(self, rows: list[Row]) -> dict[str, dict]:
        ids = {row.external_id for row in rows}
        return {
            q["external_id"]: q
            for q in Query.objects.filter(gold_set=self.gold_set, external_id__in=ids).values(
                "id", "external_id", "question", "sql"
            )
        }

    def labels_from_this_import(self, query_ids) -> dict[int, tuple[str, str]]:
        return {
            query_id: (decision, error_class)
            for query_id, decision, error_class in Label.objects.filter(
                query_id__in=query_ids, id__gte=self.first_new_label_id, source=LabelSource.IMPORT
            ).values_list("query_id", "decision", "error_class")
        }

    def check(self, rows: list[Row]) -> dict[str, dict]:
        """Raise at the first row clashing with the gold set or earlier lines; return existing queries."""
        existing = self.existing(rows)
        earlier = self.labels_from_this_import([q["id"] for q in existing.values()])
        for row in rows:
            query = existing.get(row.external_id)
            if query is None:
                continue
            for name in ("sql", "question"):
                if query[name] != getattr(row, name):
                    reason = f"id '{row.external_id}' is already in the gold set with another {name}"
                    raise GoldImportError(row.line, reason)
            if query["id"] in earlier and earlier[query["id"]] != row.label:
                raise GoldImportError(row.line, f"duplicate id '{row.external_id}' with a different label")
        return existing

    def write(self, rows: list[Row]) -> None:
        existing = self.check(rows)
        new_rows, seen = [], set()
        for row in rows:
            if row.external_id not in existing and row.external_id not in seen:
                seen.add(row.external_id)
                new_rows.append(row)
        for row, fingerprint in zip(new_rows, self.fingerprints(new_rows), strict=True):
            key = overlap_key_for(row.external_id)
            existing[row.external_id] = {"id": None, "fingerprint": fingerprint, "key": key, "row": row}
        created_at = db_value(Query, "created_at", self.now)
        metadata = db_value(Query, "metadata", {})
        # A new query's label count is known now: one per distinct labeller among its lines.
        raters: dict[str, set] = {}
        for row in rows:
            if row.external_id in seen:
                raters.setdefault(row.external_id, set()).add(row.labeller_id)
        insert_rows(
            Query,
            QUERY_FIELDS,
            (
                (
                    row.question,
                    row.sql,
                    row.dialect,
                    row.warehouse_id,
                    QuerySource.GOLD.value,
                    self.gold_set.pk,
                    row.external_id,
                    existing[row.external_id]["fingerprint"],
                    row.reference_sql,
                    metadata,
                    created_at,
                    len(raters[row.external_id]),
                    existing[row.external_id]["key"],
                    existing[row.external_id]["key"] < self.gold_set.overlap_share,
                )
                for row in new_rows
            ),
        )
        if new_rows:
            for external_id, query_id in Query.objects.filter(
                gold_set=self.gold_set, external_id__in=[row.external_id for row in new_rows]
            ).values_list("external_id", "id"):
                existing[external_id]["id"] = query_id
        fresh = {existing[external_id]["id"] for external_id in seen}
        self.write_labels(rows, {ext: q["id"] for ext, q in existing.items()}, fresh)
        self.written += len(rows)

    def write_labels(self, rows: list[Row], query_ids: dict[str, int], fresh: set[int]) -> None:
        """Insert the batch's labels, superseding current ones; `fresh` queries already carry their count."""
        current = {}
        for label_id, query_id, labeller_id, decision, error_class, source in Label.objects.filter(
            query_id__in=set(query_ids.values()), is_current=True
        ).values_list("id", "query_id", "labeller_id", "decision", "error_class", "source"):
            if labeller_id is not None or source == LabelSource.IMPORT:
                current[(query_id, labeller_id)] = (label_id, (decision, error_class))
        superseded, new_labels, new_slots = [], {}, {}
        created_at = db_value(Label, "created_at", self.now)
        for row in rows:
            slot = (query_ids[row.external_id], row.labeller_id)
            if slot in new_labels:
                continue  # the same line again (same label, checked above)
            previous = current.get(slot)
            if previous is not None and previous[1] == row.label:
                continue  # already this labeller's current label: nothing to record
            if previous is not None:
                superseded.append(previous[0])
            else:
                if slot[0] not in fresh:
                    new_slots[slot[0]] = new_slots.get(slot[0], 0) + 1
            new_labels[slot] = (
                slot[0],
                row.labeller_id,
                row.decision,
                row.error_class,
                "",
                LabelSource.IMPORT.value,
                True,
                created_at,
            )
        if superseded:
            Label.objects.filter(id__in=superseded).update(is_current=False)
        insert_rows(Label, LABEL_FIELDS, new_labels.values())
        by_increment: dict[int, list[int]] = {}
        for query_id, increment in new_slots.items():
            by_increment.setdefault(increment, []).append(query_id)
        for increment, ids in by_increment.items():
            Query.objects.filter(id__in=ids).update(label_count=F("label_count") + increment)


def _check_in_batch(batch: dict[str, Row], row: Row) -> bool:
    """Return False when `row` repeats an earlier line of the batch exactly; raise when it clashes."""
    earlier = batch.get(row.external_id)
    if earlier is None:
        return True
    if earlier.label != row.label:
        raise GoldImportError(row.line, f"duplicate id '{row.external_id}' with a different label")
    for name in ("sql", "question"):
        if getattr(earlier, name) != getattr(row, name):
            raise GoldImportError(row.line, f"duplicate id '{row.external_id}' with another {name}")
    return earlier.labeller_id != row.labeller_id


@transaction.atomic
def goldset_import(
    *,
    path_or_file,
    gold_set_name: str,
    fmt: str | None = None,
    user=None,
    progress: Callable[[int], None] | None = None,
) -> GoldSetVersion:
    """Import a gold set file and publish a new version; raise GoldImportError on a bad line.

    The gold set is created if needed, or extended: an id already in it must carry the
    same question and SQL, and its label becomes the (labeller's or import's) current
    label. The whole file is one transaction: on any error nothing is written.
    """
    name = getattr(path_or_file, "name", str(path_or_file))
    fmt = detect_format(name, fmt)
    gold_set = goldset_get_or_create(name=gold_set_name)
    first_new_label_id = (Label.objects.aggregate(n=Max("id"))["n"] or 0) + 1
    writer = BatchWriter(gold_set, first_new_label_id)
    parser = RowParser()
    batch: dict[str, Row] = {}
    pending: list[Row] = []
    with open_text(path_or_file) as stream:
        records = _jsonl_records(stream) if fmt == "jsonl" else _csv_records(stream)
        try:
            for line, record in records:
                row = parser.parse(line, record)
                if _check_in_batch(batch, row):
                    batch.setdefault(row.external_id, row)
                    pending.append(row)
                if len(pending) >= BATCH_SIZE:
                    writer.write(pending)
                    batch, pending = {}, []
                    if progress:
                        progress(line)
        except GoldImportError:
            writer.check(pending)  # an earlier line of this batch may clash with the gold set
            raise
        writer.write(pending)
    total = writer.written
    if total == 0 and not Query.objects.filter(gold_set=gold_set).exists():
        raise GoldImportError(1, "the file has no records")
    if writer.deferred_fingerprints:
        from labelling.tasks import query_fingerprint_fill

        gold_set_id = gold_set.pk
        transaction.on_commit(lambda: query_fingerprint_fill.delay(gold_set_id=gold_set_id))
    return goldset_publish(gold_set=gold_set, user=user, note=f"import of {Path(name).name}: {total} records")


# --- Export -------------------------------------------------------------------------------


def export_records(version: GoldSetVersion) -> Iterator[dict]:
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


class _Line:
    """A write-only buffer that hands back what the csv writer wrote."""

    def write(self, value):
        return value


def export_lines(version: GoldSetVersion, fmt: str) -> Iterator[str]:
    """Yield the export of a version line by line (streamable)."""
    if fmt == "jsonl":
        for record in export_records(version):
            yield json.dumps(record, ensure_ascii=False) + "\n"
        return
    writer = csv.writer(_Line(), lineterminator="\n")
    yield writer.writerow(FIELDS)
    for record in export_records(version):
        yield writer.writerow(["" if record[name] is None else record[name] for name in FIELDS])


def goldset_export(*, version: GoldSetVersion, fmt: str, out) -> int:
    """Write a version to the text stream `out` as JSONL or CSV; return the items written."""
    fmt = detect_format("", fmt)
    count = 0
    for line in export_lines(version, fmt):
        out.write(line)
        count += 1
    return count - (1 if fmt == "csv" else 0)
