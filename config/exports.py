"""CSV and JSON downloads: the one writer behind every table Docket exports.

A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
as a formula (CSV injection). As the OWASP "CSV Injection" page recommends, every such
text cell is prefixed with a single quote, and every text cell is quoted; numbers stay
numbers. Docket's own CSV importers drop that quote again (`unneutralise_cell`), so an
export imports back unchanged.

Every download is streamed (a StreamingHttpResponse) and holds every row: the records come
from iterators the callers read from the database in chunks, never from a page's slice.
"""

import csv
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal

from django.http import StreamingHttpResponse

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# The JSON encoder yields tokens of a few bytes; the stream sends them in pieces of this size.
JSON_PIECE_CHARS = 64 * 1024
NEUTRALISER = "'"


def neutralise_cell(value):
    """Return a CSV cell a spreadsheet cannot read as a formula (None becomes empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    if isinstance(value, int | float | Decimal):
        return value
    text = value if isinstance(value, str) else str(value)
    if text.startswith(FORMULA_TRIGGERS):
        return NEUTRALISER + text
    return text


def unneutralise_cell(text: str) -> str:
    """Undo `neutralise_cell` on a text read back from a Docket CSV."""
    if text.startswith(NEUTRALISER) and text[1:2] and text[1:].startswith(FORMULA_TRIGGERS):
        return text[1:]
    return text


class _Echo:
    """A write-only buffer that hands back what the csv writer wrote (for streaming)."""

    def write(self, value):
        return value


def csv_writer(out):
    """Return a csv writer on `out` that quotes text cells; pair it with `csv_row`."""
    return csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)


def csv_row(values: Iterable) -> list:
    """Return a row of neutralised cells for `csv_writer(...).writerow`."""
    return [neutralise_cell(value) for value in values]


def csv_lines(header: Sequence[str], rows: Iterable[Sequence]) -> Iterator[str]:
    """Yield a CSV text line by line: the header, then each row, every cell neutralised."""
    writer = csv_writer(_Echo())
    yield writer.writerow(csv_row(header))
    for row in rows:
        yield writer.writerow(csv_row(row))


def csv_text(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    """Return a whole CSV text (for commands and small tables)."""
    return "".join(csv_lines(header, rows))


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence]) -> StreamingHttpResponse:
    """Stream a CSV download; `filename` is what the browser saves it as."""
    response = StreamingHttpResponse(csv_lines(header, rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def records_csv_response(filename: str, columns: Sequence[str], records: Iterable[dict]) -> StreamingHttpResponse:
    """Stream dicts as CSV, one column per name in `columns` (lists and dicts as JSON text)."""
    rows = ([_flat(record.get(name)) for name in columns] for record in records)
    return csv_response(filename, columns, rows)


def json_response(filename: str, payload) -> StreamingHttpResponse:
    """Stream a JSON download of a dict or list (NaN and infinities become null, as in the JSON reports)."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, default=str)
    return _json_download(filename, _pieces(encoder.iterencode(_finite(payload))))


def json_records_response(filename: str, records: Iterable[dict]) -> StreamingHttpResponse:
    """Stream a JSON array of records, one record a line, reading `records` as it goes (for long tables)."""
    return _json_download(filename, _pieces(json_array_lines(records)))


def json_array_lines(records: Iterable) -> Iterator[str]:
    """Yield a JSON array a record at a time: `[`, each record on its own line, `]`."""
    separator = "\n"
    yield "["
    for record in records:
        yield separator + json.dumps(_finite(record), ensure_ascii=False, default=str)
        separator = ",\n"
    yield "\n]\n"


def _json_download(filename: str, chunks: Iterator[str]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(chunks, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _pieces(chunks: Iterable[str]) -> Iterator[str]:
    """Join small chunks into pieces of about JSON_PIECE_CHARS, so the stream is not a write per token."""
    buffered, size = [], 0
    for chunk in chunks:
        buffered.append(chunk)
        size += len(chunk)
        if size >= JSON_PIECE_CHARS:
            yield "".join(buffered)
            buffered, size = [], 0
    if buffered:
        yield "".join(buffered)


def _flat(value):
    return json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, list | dict | tuple) else value


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value
