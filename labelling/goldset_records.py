"""Reading gold set files: records from JSONL or CSV, validated into `Row`s.

One record per line (JSONL) or row (CSV) with the fields of FIELDS; `error_class`,
`warehouse`, `labeller` and `reference_sql` are optional. Labels are correct/wrong or an
alias (1/0, true/false, yes/no); a wrong label without an error class is `unclassified`.
A bad record raises GoldImportError with its line number.
"""

import contextlib
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from config.exports import unneutralise_cell
from config.roles import LABELLER
from labelling.models import UNCLASSIFIED, ErrorClass, LabelDecision
from probes.models import Warehouse

FIELDS = ["id", "question", "sql", "label", "error_class", "warehouse", "labeller", "reference_sql"]
REQUIRED = ["id", "question", "sql", "label"]


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


def jsonl_records(stream) -> Iterator[tuple[int, dict]]:
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


def csv_records(stream) -> Iterator[tuple[int, dict]]:
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
