"""Validating gold-set records into `Row`s: labels, error classes of the taxonomy, metadata, names resolved.

Every field of a record is one of three things, and the import summary says which: a known
field (FIELDS), item metadata (the JSONL `metadata` object; in any file the columns named by
`metadata_columns`, or every unknown one with `keep_unknown`), or ignored. With `strict` an
ignored field is refused by name. Error classes (one, a JSON list, or "a;b") must be classes of
the gold set's taxonomy or other names of them; unknown ones are collected, and the import
refuses them all at once naming the allowed classes — unless `create_classes` adds them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from config.roles import LABELLER
from labelling.error_classes import UNCLASSIFIED, class_name_problem, error_classes_join, error_classes_parse
from labelling.goldset_records import FIELDS, REQUIRED, GoldImportError, check_storable_text, label_decision
from labelling.models import LabelDecision
from labelling.taxonomy import TaxonomyIndex
from probes.models import Warehouse

METADATA = "metadata"
TYPED_FIELDS = ("label", "error_class")
# The export's `split` column (labelling.goldset_io): read back without complaint, never stored.
EXPORTED_SPLIT = "split"
POSITIVE_MEANS = (LabelDecision.CORRECT.value, LabelDecision.WRONG.value)


@dataclass
class Row:
    line: int
    external_id: str
    question: str
    sql: str
    decision: str
    error_class: str  # canonical "a;b" (labelling.error_classes)
    warehouse_id: int | None
    dialect: str
    labeller_id: int | None
    reference_sql: str
    labeller_name: str = ""
    metadata: dict = field(default_factory=dict)

    @property
    def label(self) -> tuple[str, str]:
        return (self.decision, self.error_class)

    @property
    def slot(self) -> tuple[str, str]:
        """The (item, labeller) this line labels: one label per labeller per item in a file."""
        return (self.external_id, self.labeller_name)


@dataclass(frozen=True)
class ParseOptions:
    """How an import reads fields beyond the known ones, and what it may create."""

    create_labellers: bool = False
    create_classes: bool = False
    positive_means: str = LabelDecision.CORRECT
    metadata_columns: tuple[str, ...] = ()
    keep_unknown: bool = False
    strict: bool = False
    warehouse_from: str = ""  # a metadata key naming each item's warehouse


class RowParser:
    """Validate records into Rows, resolving warehouses, labellers and classes once each.

    Unknown labellers and classes are noted (or created), so that the import names all of
    them at once at the end.
    """

    def __init__(self, *, taxonomy: TaxonomyIndex, options: ParseOptions = ParseOptions()):
        if options.positive_means not in POSITIVE_MEANS:
            raise GoldImportError(0, f"positive_means must be correct or wrong, not '{options.positive_means}'")
        self.taxonomy = taxonomy
        self.options = options
        self.warehouses: dict[str, tuple[int, str]] = {}
        self.labellers: dict[str, int | None] = {}
        self.unknown_labellers: dict[str, int] = {}  # name -> first line
        self.created_labellers: list[str] = []
        self.unknown_classes: dict[str, int] = {}  # name -> first line
        self.new_classes: dict[str, int] = {}  # created with create_classes, in order of first use
        self.kept_fields: set[str] = set()
        self.ignored_fields: dict[str, int] = {}  # name -> first line
        self.unclassified_wrong = 0

    @property
    def has_unknowns(self) -> bool:
        """True once a name was met that makes the import fail at its end (nothing is written meanwhile)."""
        return bool(self.unknown_labellers or self.unknown_classes)

    def check_header(self, header: list[str]) -> None:
        """Refuse a CSV whose header lacks a column the options name."""
        missing = [name for name in self.options.metadata_columns if name not in header]
        if missing:
            raise GoldImportError(1, f"--metadata-columns names {', '.join(map(repr, missing))}, not in the header")
        if self.options.strict:
            unknown = [name for name in header if self._field_kind(name) == "ignored"]
            if unknown:
                raise GoldImportError(1, self._unknown_message(unknown))

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
            found = Warehouse.objects.filter(name=name).values_list("id", "dialect").first()
            if found is None:
                raise GoldImportError(line, f"unknown warehouse '{name}'")
            self.warehouses[name] = found
        return self.warehouses[name]

    def labeller(self, line, username):
        if username not in self.labellers:
            found = get_user_model().objects.filter(username=username).values_list("id", flat=True).first()
            if found is None and self.options.create_labellers:
                found = self.create_labeller(line, username)
            if found is None:
                self.unknown_labellers.setdefault(username, line)
            self.labellers[username] = found
        return self.labellers[username]

    def create_labeller(self, line, username) -> int:
        """Create a labeller user with no usable password (an admin sets one later)."""
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

    def error_classes(self, line: int, raw) -> tuple[list[str], bool]:
        """Return the line's classes under their taxonomy names, and whether one was unknown (noted)."""
        try:
            names = error_classes_parse(raw)
        except ValueError as exc:
            raise GoldImportError(line, f"error_class: {exc}") from None
        resolved, unknown = [], False
        for name in names:
            check_storable_text(line, "error_class", name)
            found = UNCLASSIFIED if name == UNCLASSIFIED else self.taxonomy.resolve(name)
            if found is not None and found != UNCLASSIFIED and found not in self.taxonomy.active:
                found = None  # retired: no new label may use it
            if found is None:
                problem = class_name_problem(name)
                if problem:
                    raise GoldImportError(line, f"error class '{name}': {problem}")
                if self.options.create_classes and name not in self.taxonomy.names:
                    self.new_classes.setdefault(name, line)
                    found = name
                else:
                    self.unknown_classes.setdefault(name, line)
                    unknown = True
                    continue
            resolved.append(found)
        return resolved, unknown

    def metadata(self, line: int, record: dict) -> dict:
        """Return the record's metadata: its `metadata` object and the fields kept as metadata."""
        metadata = {}
        given = record.get(METADATA)
        if isinstance(given, str) and given.strip():  # a CSV column holding a JSON object
            try:
                given = json.loads(given)
            except json.JSONDecodeError:
                raise GoldImportError(line, "field 'metadata' must be a JSON object") from None
        if given not in (None, "") and not isinstance(given, dict):
            raise GoldImportError(line, "field 'metadata' must be a JSON object")
        if given:
            self.kept_fields.add(METADATA)
            metadata.update(given)
        for name, value in record.items():
            kind = self._field_kind(name)
            if kind == "metadata":
                if value is not None:
                    if isinstance(value, str):
                        check_storable_text(line, name, value)
                    metadata[name] = value
                    self.kept_fields.add(name)
            elif kind == "ignored":
                if self.options.strict:
                    raise GoldImportError(line, self._unknown_message([name]))
                self.ignored_fields.setdefault(name, line)
        return metadata

    def parse(self, line: int, record: dict) -> Row:
        # label and error_class are read below: a label may be a number, classes a list.
        values = {name: self.text(line, record, name, name in REQUIRED) for name in FIELDS if name not in TYPED_FIELDS}
        raw_label = record.get("label")
        if raw_label is None or (isinstance(raw_label, str) and not raw_label.strip()):
            raise GoldImportError(line, "missing field 'label'")
        decision = label_decision(raw_label, self.options.positive_means)
        if decision is None or isinstance(raw_label, dict | list | float):
            raise GoldImportError(
                line, f"label must be correct or wrong (or 1/0, true/false, yes/no), not '{raw_label}'"
            )
        classes, unknown = self.error_classes(line, record.get("error_class"))
        if decision == LabelDecision.WRONG and not classes and not unknown:
            classes = [UNCLASSIFIED]
            self.unclassified_wrong += 1
        if decision == LabelDecision.CORRECT and classes:
            raise GoldImportError(line, f"a correct label cannot carry error_class '{error_classes_join(classes)}'")
        metadata = self.metadata(line, record)
        warehouse_name = values["warehouse"] or self._warehouse_from(line, record, metadata)
        warehouse_id, dialect = self.warehouse(line, warehouse_name) if warehouse_name else (None, "sqlite")
        labeller_id = self.labeller(line, values["labeller"]) if values["labeller"] else None
        return Row(
            line=line,
            external_id=values["id"],
            question=values["question"],
            sql=values["sql"],
            decision=decision,
            error_class=error_classes_join(classes),
            warehouse_id=warehouse_id,
            dialect=dialect,
            labeller_id=labeller_id,
            reference_sql=values["reference_sql"],
            labeller_name=values["labeller"],
            metadata=metadata,
        )

    def _field_kind(self, name: str) -> str:
        if name in FIELDS or name == METADATA:
            return "known"
        if name == EXPORTED_SPLIT:
            # A split belongs to the version it was drawn on: the export says it, an import drops it.
            return "known"
        if name in self.options.metadata_columns or self.options.keep_unknown:
            return "metadata"
        if name == self.options.warehouse_from:
            return "metadata"  # the key that names the warehouse is kept with the item
        return "ignored"

    def _warehouse_from(self, line: int, record: dict, metadata: dict) -> str:
        key = self.options.warehouse_from
        if not key:
            return ""
        value = metadata.get(key, record.get(key))
        if value is None or (isinstance(value, str) and not value.strip()):
            raise GoldImportError(line, f"--warehouse-from {key}: the item has no '{key}'")
        return str(value).strip()

    @staticmethod
    def _unknown_message(names: list[str]) -> str:
        listed = ", ".join(f"'{name}'" for name in names)
        return (
            f"unknown field{'s' * (len(names) > 1)} {listed} (--strict): known fields are {', '.join(FIELDS)},"
            f" {METADATA}; keep others with --metadata-columns or --keep-unknown-columns"
        )
