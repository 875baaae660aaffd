"""Reading gold set files: records from JSONL or CSV, streamed (`labelling.goldset_parser` validates them).

One record per line (JSONL) or row (CSV) with the fields of FIELDS; `error_class`,
`warehouse`, `labeller` and `reference_sql` are optional, and a JSONL record may carry a
`metadata` object. Labels are correct/wrong or an alias (1/0, true/false, yes/no); a wrong
label without an error class is `unclassified`. A bad record raises GoldImportError with its
line number.
"""

import contextlib
import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from config.exports import unneutralise_cell
from labelling.models import LabelDecision

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


def csv_records(stream, on_header=None) -> Iterator[tuple[int, dict]]:
    """Yield (line, record) of each CSV row; `on_header` may refuse the header (raise GoldImportError)."""
    reader = csv.reader(stream, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [name.strip() for name in header]
        missing = [name for name in REQUIRED if name not in header]
        if missing:
            raise GoldImportError(1, f"missing column {', '.join(repr(m) for m in missing)} in the header")
        if len(set(header)) != len(header):
            repeated = sorted({name for name in header if header.count(name) > 1})
            raise GoldImportError(1, f"column {', '.join(map(repr, repeated))} appears twice in the header")
        if on_header is not None:
            on_header(header)
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
