"""Import and export of gold sets: JSONL or CSV, streamed, one transaction per import.

One record per line (JSONL) or row (CSV) with the fields of FIELDS; `error_class`,
`warehouse`, `labeller` and `reference_sql` are optional. One file may carry several
labellers' labels of the same item. Labels are correct/wrong or an alias (1/0, true/false,
yes/no); a wrong label without an error class is `unclassified`. The import reads the
file a batch at a time (never the whole file), writes with bulk inserts, and stops at the
first bad line with "line N: reason", leaving the database as it was. It then publishes a
new version under a resolution policy (manual, majority or unanimous-only).
"""

import contextlib
import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from config.exports import csv_lines, unneutralise_cell
from labelling.bulk import db_value, insert_rows
from labelling.models import (
    UNCLASSIFIED,
    ErrorClass,
    GoldSet,
    GoldSetVersion,
    GoldSetVersionItem,
    Label,
    LabelDecision,
    LabelSource,
    Query,
    QuerySource,
    ResolutionPolicy,
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
    """A bad line (or a bad file) in an import: the import stops and writes nothing."""

    def __init__(self, line: int, reason: str):
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}" if line else reason)


# Label values besides correct/wrong, read in the sense of --positive-means (default: a
# positive value — 1, true, yes — means the SQL is correct).
POSITIVE_VALUES = ("1", "true", "yes")
NEGATIVE_VALUES = ("0", "false", "no")
POSITIVE_MEANS = (LabelDecision.CORRECT.value, LabelDecision.WRONG.value)
LABEL_ERROR_CLASS_VALUES = {*ErrorClass.values, UNCLASSIFIED}


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
    labeller_name: str = ""

    @property
    def label(self) -> tuple[str, str]:
        return (self.decision, self.error_class)

    @property
    def slot(self) -> tuple[str, str]:
        """The (item, labeller) this line labels: one label per labeller per item in a file."""
        return (self.external_id, self.labeller_name)


@dataclass
class ImportSummary:
    """What an import did, exactly: created, updated and skipped, with the reasons."""

    file: str = ""
    records: int = 0
    queries_created: int = 0
    queries_existing: int = 0
    labels_created: int = 0
    labels_updated: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    labellers_created: list[str] = field(default_factory=list)

    def skip(self, reason: str, count: int = 1) -> None:
        if count:
            self.skipped[reason] = self.skipped.get(reason, 0) + count

    @property
    def changed_anything(self) -> bool:
        return bool(self.queries_created or self.labels_created or self.labels_updated)

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "records": self.records,
            "queries_created": self.queries_created,
            "queries_existing": self.queries_existing,
            "labels_created": self.labels_created,
            "labels_updated": self.labels_updated,
            "skipped": dict(self.skipped),
            "labellers_created": list(self.labellers_created),
        }

    def describe(self) -> str:
        """Return one sentence saying what was created, updated and skipped, and why."""
        parts = [
            f"{self.records} record{'s' * (self.records != 1)} read",
            f"{self.queries_created} new item{'s' * (self.queries_created != 1)}",
            f"{self.queries_existing} already in the gold set",
            f"{self.labels_created} label{'s' * (self.labels_created != 1)} created",
            f"{self.labels_updated} updated",
        ]
        skipped = sum(self.skipped.values())
        reasons = "; ".join(f"{n} {reason}" for reason, n in sorted(self.skipped.items()))
        parts.append(f"{skipped} skipped" + (f" ({reasons})" if reasons else ""))
        if self.labellers_created:
            parts.append(f"labellers created: {', '.join(self.labellers_created)}")
        return ", ".join(parts) + "."


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


def parse_json_line(line: int, text: str, error=GoldImportError):
    """Parse one JSON text; a syntax error or a nesting too deep for the parser is a bad line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(line, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise error(line, "invalid JSON (nested too deeply)") from None


def _jsonl_records(stream) -> Iterator[tuple[int, dict]]:
    line = 0
    try:
        for line, text in enumerate(stream, start=1):  # noqa: B007 - line is read after a decode error
            if not text.strip():
                continue
            record = parse_json_line(line, text)
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
            yield (
                start,
                {
                    name: (unneutralise_cell(value) if value != "" else None)
                    for name, value in zip(header, row, strict=True)
                },
            )
    except csv.Error as exc:
        raise GoldImportError(reader.line_num, f"bad CSV ({exc})") from None
    except UnicodeDecodeError:
        raise GoldImportError(reader.line_num + 1, "not UTF-8 text") from None


def check_storable_text(line: int, name: str, value: str, error=GoldImportError) -> str:
    """Refuse text no database can store as given: lone surrogates and NUL characters."""
    if "\x00" in value:
        raise error(line, f"field '{name}' contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        raise error(
            line, f"field '{name}' contains a lone surrogate (\\u{ord(bad):04x} at character {exc.start + 1})"
        ) from None
    return value


def label_decision(value, positive_means: str = LabelDecision.CORRECT) -> str | None:
    """Return correct/wrong for a label value or one of its aliases, or None when it is neither."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    text = str(value).strip().lower()
    if text in (LabelDecision.CORRECT, LabelDecision.WRONG):
        return text
    negative = LabelDecision.WRONG if positive_means == LabelDecision.CORRECT else LabelDecision.CORRECT
    if text in POSITIVE_VALUES:
        return str(positive_means)
    if text in NEGATIVE_VALUES:
        return str(negative)
    return None


class RowParser:
    """Validate records into Rows, resolving warehouse and labeller names once each.

    An unknown labeller is created (`create_labellers`) or noted, so that the import can
    name every unknown labeller at once at the end.
    """

    def __init__(self, *, create_labellers: bool = False, positive_means: str = LabelDecision.CORRECT):
        if positive_means not in POSITIVE_MEANS:
            raise GoldImportError(0, f"positive_means must be correct or wrong, not '{positive_means}'")
        self.warehouses: dict[str, tuple[int, str]] = {}
        self.labellers: dict[str, int | None] = {}
        self.create_labellers = create_labellers
        self.positive_means = positive_means
        self.unknown_labellers: dict[str, int] = {}  # name -> first line
        self.created_labellers: list[str] = []

    def text(self, line, record, name, required):
        value = record.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise GoldImportError(line, f"missing field '{name}'")
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise GoldImportError(line, f"field '{name}' must be text")
        return check_storable_text(line, name, str(value))

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
            if found is None and self.create_labellers:
                found = self.create_labeller(line, username)
            if found is None:
                self.unknown_labellers.setdefault(username, line)
            self.labellers[username] = found
        return self.labellers[username]

    def create_labeller(self, line, username) -> int:
        """Create a labeller user with no usable password (an admin sets one later)."""
        from django.contrib.auth.models import Group

        from config.roles import LABELLER

        user = get_user_model()(username=username)
        user.set_unusable_password()
        try:
            user.full_clean(exclude=["password"])
        except ValidationError as exc:
            raise GoldImportError(line, f"cannot create labeller '{username}': {'; '.join(exc.messages)}") from None
        user.save()
        user.groups.add(Group.objects.get_or_create(name=LABELLER)[0])
        self.created_labellers.append(username)
        return user.pk

    def parse(self, line: int, record: dict) -> Row:
        values = {name: self.text(line, record, name, name in REQUIRED) for name in FIELDS if name != "label"}
        raw_label = record.get("label")
        if raw_label is None or (isinstance(raw_label, str) and not raw_label.strip()):
            raise GoldImportError(line, "missing field 'label'")
        decision = label_decision(raw_label, self.positive_means)
        if decision is None or isinstance(raw_label, dict | list | float):
            raise GoldImportError(
                line, f"label must be correct or wrong (or 1/0, true/false, yes/no), not '{raw_label}'"
            )
        error_class = values["error_class"].strip()
        if error_class and error_class not in LABEL_ERROR_CLASS_VALUES:
            raise GoldImportError(line, f"unknown error class '{error_class}'")
        if decision == LabelDecision.WRONG and not error_class:
            error_class = UNCLASSIFIED
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
            labeller_name=values["labeller"],
        )


# --- Writing ------------------------------------------------------------------------------


def _who(labeller_name: str) -> str:
    return f"labeller '{labeller_name}'" if labeller_name else "the import (no labeller)"


class BatchWriter:
    """Write batches of rows: new queries, superseding labels, label counts; checks duplicates."""

    def __init__(self, gold_set: GoldSet, first_new_label_id: int, summary: ImportSummary):
        self.gold_set = gold_set
        self.first_new_label_id = first_new_label_id
        self.summary = summary
        self.written = 0
        self.fingerprinted = 0
        self.deferred_fingerprints = 0
        self.now = timezone.now()
        self.seen_queries: set[str] = set()

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

    def labels_from_this_import(self, query_ids) -> dict[tuple[int, int | None], tuple[str, str]]:
        """Return {(query, labeller): label} written by earlier batches of this import."""
        return {
            (query_id, labeller_id): (decision, error_class)
            for query_id, labeller_id, decision, error_class in Label.objects.filter(
                query_id__in=query_ids, id__gte=self.first_new_label_id, source=LabelSource.IMPORT, is_current=True
            ).values_list("query_id", "labeller_id", "decision", "error_class")
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
            previous = earlier.get((query["id"], row.labeller_id))
            if previous is not None and previous != row.label:
                raise GoldImportError(
                    row.line,
                    f"id '{row.external_id}' labelled twice by {_who(row.labeller_name)} with different labels",
                )
        return existing

    def write(self, rows: list[Row]) -> None:
        existing = self.check(rows)
        new_rows, seen = [], set()
        for row in rows:
            if row.external_id not in existing and row.external_id not in seen:
                seen.add(row.external_id)
                new_rows.append(row)
        for external_id in existing.keys() - self.seen_queries:
            self.seen_queries.add(external_id)
            self.summary.queries_existing += 1
        self.seen_queries |= seen
        self.summary.queries_created += len(new_rows)
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
                self.summary.skip("repeated lines")
                continue
            previous = current.get(slot)
            if previous is not None and previous[1] == row.label:
                self.summary.skip("unchanged (already the labeller's current label)")
                continue
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
        self.summary.labels_updated += len(superseded)
        self.summary.labels_created += len(new_labels) - len(superseded)
        insert_rows(Label, LABEL_FIELDS, new_labels.values())
        by_increment: dict[int, list[int]] = {}
        for query_id, increment in new_slots.items():
            by_increment.setdefault(increment, []).append(query_id)
        for increment, ids in by_increment.items():
            Query.objects.filter(id__in=ids).update(label_count=F("label_count") + increment)


def _check_in_batch(by_slot: dict[tuple, Row], by_id: dict[str, Row], row: Row) -> bool:
    """Return False when `row` repeats an earlier line exactly; raise when it clashes.

    Several labellers may label one item (their disagreement is data); one labeller may
    label an item once, and every line of an item must carry the same question and SQL.
    """
    first = by_id.get(row.external_id)
    if first is not None:
        for name in ("sql", "question"):
            if getattr(first, name) != getattr(row, name):
                reason = f"duplicate id '{row.external_id}' with another {name} (line {first.line})"
                raise GoldImportError(row.line, reason)
    earlier = by_slot.get(row.slot)
    if earlier is None:
        return True
    if earlier.label != row.label:
        raise GoldImportError(
            row.line,
            f"id '{row.external_id}' labelled twice by {_who(row.labeller_name)} with different labels"
            f" (line {earlier.line})",
        )
    return False


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
        records = _jsonl_records(stream) if fmt == "jsonl" else _csv_records(stream)
        try:
            for line, record in records:
                row = parser.parse(line, record)
                summary.records += 1
                if _check_in_batch(by_slot, by_id, row):
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
        from labelling.tasks import query_fingerprint_fill

        gold_set_id = gold_set.pk
        transaction.on_commit(lambda: query_fingerprint_fill.delay(gold_set_id=gold_set_id))
    version = goldset_publish(
        gold_set=gold_set, user=user, note=f"import of {Path(name).name}: {summary.describe()}", resolve=resolve
    )
    version.import_summary = summary
    return version


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


def export_lines(version: GoldSetVersion, fmt: str) -> Iterator[str]:
    """Yield the export of a version line by line (streamable); CSV cells are neutralised."""
    if fmt == "jsonl":
        for record in export_records(version):
            yield json.dumps(record, ensure_ascii=False) + "\n"
        return
    yield from csv_lines(FIELDS, ([record[name] for name in FIELDS] for record in export_records(version)))


def goldset_export(*, version: GoldSetVersion, fmt: str, out) -> int:
    """Write a version to the text stream `out` as JSONL or CSV; return the items written."""
    fmt = detect_format("", fmt)
    count = 0
    for line in export_lines(version, fmt):
        out.write(line)
        count += 1
    return count - (1 if fmt == "csv" else 0)
