"""Writing an import's rows: new queries, superseding labels and label counts, in batches.

`BatchWriter` bulk-inserts each batch and checks it against the gold set and the earlier
batches of the same import; `ImportSummary` counts what was created, updated and skipped.
"""

from dataclasses import dataclass, field

from django.db.models import F
from django.utils import timezone

from labelling.blind import revealed_pairs_get
from labelling.bulk import QUERY_INSERT_FIELDS, db_value, insert_rows
from labelling.error_classes import error_classes_join, error_classes_split
from labelling.goldset_parser import Row
from labelling.goldset_records import GoldImportError
from labelling.models import GoldSet, Label, LabelSource, Query, QuerySource
from labelling.services import overlap_key_draw
from probes.fingerprint import sql_fingerprint

# Fingerprinting (sqlglot parse + render) costs ~2-5 ms a query, two minutes for 50,000
# items: an import fingerprints its first items at once and leaves the rest to the task
# `labelling.query_fingerprint_fill`, enqueued when the import commits.
INLINE_FINGERPRINT_LIMIT = 2000
LABEL_FIELDS = ["query", "labeller", "decision", "error_class", "note", "source", "is_current", "blind", "created_at"]


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
    # Lines that added a class to an earlier line's wrong label (one line per class).
    classes_merged: int = 0
    metadata_updated: int = 0
    fields_kept_as_metadata: list[str] = field(default_factory=list)
    fields_ignored: list[str] = field(default_factory=list)
    classes_created: list[str] = field(default_factory=list)
    unclassified_wrong: int = 0
    taxonomy: str = ""
    taxonomy_changes: list[str] = field(default_factory=list)
    # New items that name no warehouse: nothing can run them, so no result preview.
    items_without_warehouse: int = 0

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
            "classes_merged": self.classes_merged,
            "metadata_updated": self.metadata_updated,
            "fields_kept_as_metadata": list(self.fields_kept_as_metadata),
            "fields_ignored": list(self.fields_ignored),
            "classes_created": list(self.classes_created),
            "unclassified_wrong": self.unclassified_wrong,
            "taxonomy": self.taxonomy,
            "taxonomy_changes": list(self.taxonomy_changes),
            "items_without_warehouse": self.items_without_warehouse,
        }

    def warnings(self) -> list[str]:
        """Return what the import did that its user may not expect (shown apart from `describe`)."""
        n = self.items_without_warehouse
        if not n:
            return []
        return [
            f"{n} new item{'s name' if n != 1 else ' names'} no warehouse, so no result preview is possible for"
            f" {'them' if n != 1 else 'it'}. To preview items, give each one a registered warehouse when it is"
            ' imported: a "warehouse" column, or a metadata key naming it ("Warehouse from" on the import page,'
            " --warehouse-from for import_gold)."
        ]

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
        if self.classes_merged:
            parts.append(f"{self.classes_merged} lines added a class to an earlier line's label")
        if self.metadata_updated:
            parts.append(f"metadata updated on {self.metadata_updated} existing items")
        sentences = [", ".join(parts) + "."]
        if self.taxonomy:
            changes = f" ({'; '.join(self.taxonomy_changes)})" if self.taxonomy_changes else ""
            sentences.append(f"Taxonomy: {self.taxonomy}{changes}.")
        if self.classes_created:
            sentences.append(f"Classes created: {', '.join(self.classes_created)}.")
        kept = ", ".join(self.fields_kept_as_metadata) or "none"
        ignored = ", ".join(self.fields_ignored) or "none"
        sentences.append(f"Kept as metadata: {kept}. Ignored fields: {ignored}.")
        if self.unclassified_wrong:
            sentences.append(
                f"{self.unclassified_wrong} wrong label{'s' * (self.unclassified_wrong != 1)} without an error class"
                " (unclassified)."
            )
        return " ".join(sentences)


def labeller_phrase(labeller_name: str) -> str:
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
                "id", "external_id", "question", "sql", "metadata"
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
            if previous is not None and previous != row.label and not both_wrong(previous, row.label):
                who = labeller_phrase(row.labeller_name)
                raise GoldImportError(row.line, f"id '{row.external_id}' labelled twice by {who} with different labels")
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
        self.summary.items_without_warehouse += sum(1 for row in new_rows if row.warehouse_id is None)
        for row, fingerprint in zip(new_rows, self.fingerprints(new_rows), strict=True):
            key = overlap_key_draw(external_id=row.external_id)
            existing[row.external_id] = {"id": None, "fingerprint": fingerprint, "key": key, "row": row}
        created_at = db_value(Query, "created_at", self.now)
        self.metadata_update(rows, existing)
        # A new query's label count is known now: one per distinct labeller among its lines.
        raters: dict[str, set] = {}
        for row in rows:
            if row.external_id in seen:
                raters.setdefault(row.external_id, set()).add(row.labeller_id)
        insert_rows(
            Query,
            QUERY_INSERT_FIELDS,
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
                    db_value(Query, "metadata", row.metadata),
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

    def metadata_update(self, rows: list[Row], existing: dict[str, dict]) -> None:
        """Merge the file's metadata into items already in the gold set (metadata is not versioned)."""
        for row in rows:
            query = existing.get(row.external_id)
            if not row.metadata or query is None or "metadata" not in query:
                continue
            merged = {**(query["metadata"] or {}), **row.metadata}
            if merged != query["metadata"]:
                Query.objects.filter(pk=query["id"]).update(metadata=merged)
                query["metadata"] = merged
                self.summary.metadata_updated += 1

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
        # The rule of every label (labelling.blind): not blind if Docket showed that labeller
        # another label of the item before; a label without a labeller is blind.
        revealed = revealed_pairs_get(
            pairs={(row.labeller_id, query_ids[row.external_id]) for row in rows if row.labeller_id is not None}
        )
        for row in rows:
            slot = (query_ids[row.external_id], row.labeller_id)
            if slot in new_labels:
                self.summary.skip("repeated lines")
                continue
            previous = current.get(slot)
            if previous is not None and previous[1] == row.label:
                self.summary.skip("unchanged (already the labeller's current label)")
                continue
            if previous is not None and previous[0] >= self.first_new_label_id and both_wrong(previous[1], row.label):
                # Another line of this import with more classes of the same wrong label.
                classes = error_classes_join(error_classes_split(previous[1][1]) + error_classes_split(row.error_class))
                Label.objects.filter(pk=previous[0]).update(error_class=classes)
                current[slot] = (previous[0], (row.decision, classes))
                self.summary.classes_merged += 1
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
                (row.labeller_id, slot[0]) not in revealed,
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


def both_wrong(a: tuple[str, str], b: tuple[str, str]) -> bool:
    return a[0] == b[0] == "wrong"


def row_check_in_batch(by_slot: dict[tuple, Row], by_id: dict[str, Row], row: Row, summary: ImportSummary) -> bool:
    """Return False when `row` repeats or extends an earlier line (merged into it); raise when it clashes.

    Several labellers may label one item (their disagreement is data); one labeller may
    label an item once — a wrong label may take one line per class, whose classes are merged
    — and every line of an item must carry the same question and SQL. Metadata of several
    lines of an item is merged too.
    """
    first = by_id.get(row.external_id)
    if first is not None:
        for name in ("sql", "question"):
            if getattr(first, name) != getattr(row, name):
                reason = f"duplicate id '{row.external_id}' with another {name} (line {first.line})"
                raise GoldImportError(row.line, reason)
    if first is not None and row.metadata:
        first.metadata = {**first.metadata, **row.metadata}
    earlier = by_slot.get(row.slot)
    if earlier is None:
        return True
    if earlier.label != row.label and both_wrong(earlier.label, row.label):
        earlier.error_class = error_classes_join(
            error_classes_split(earlier.error_class) + error_classes_split(row.error_class)
        )
        summary.classes_merged += 1
        return False
    if earlier.label != row.label:
        raise GoldImportError(
            row.line,
            f"id '{row.external_id}' labelled twice by {labeller_phrase(row.labeller_name)} with different labels"
            f" (line {earlier.line})",
        )
    return False
