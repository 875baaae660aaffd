"""The calibration report's verdict fetch: three numbers per verdict, packed by the database.

The one hand-built SELECT of the judges app, kept because `make bench` (bench_report) misses
its target when the rows come through the ORM (the numbers are in the commit that kept it).
SQL packs query id, judge version id and a decision code into one integer (query × span +
judge × 4 + code), run and repeat into another (the draw key), and sends the latency; on
PostgreSQL the results come in binary, because psycopg parses text-format floats slowly.
Judge version ids too large to pack fall back to a separate query id column.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import psycopg
from django.db import connection, transaction

from judges.metrics import ACCEPT, ERROR, REJECT
from judges.models import Verdict

DECISION_SQL = f"CASE decision WHEN 'accept' THEN {ACCEPT} WHEN 'reject' THEN {REJECT} ELSE {ERROR} END"
# A latency that was not measured (NULL) comes back as -1, then NaN.
LATENCY_SQL = "COALESCE(latency_ms, -1.0)"
# Packing (query, judge version, decision) into one int64 needs query id × span < 2**63.
MAX_PACKING_SPAN = 2**24
# A draw key orders a judge's verdicts on an item: run × 2**16 + repeat (repeats < 2**15).
DRAW_RUN_SHIFT = 16
CHUNK_ROWS = 100_000


@contextmanager
def streaming_cursor():
    """Yield a DB-API cursor whose `fetchmany` holds one chunk of the result in memory at a time.

    On PostgreSQL a plain psycopg cursor receives the whole result into libpq before the
    first row is read (about 130 bytes a verdict: 650 MB at five million), so this is a
    server-side cursor, inside a transaction as one must be, receiving binary results
    (psycopg parses text-format floats slowly). SQLite's cursor already steps row by row.
    """
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    with transaction.atomic(using=connection.alias):
        # A server-side cursor is planned for its first rows unless told it reads them all.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL cursor_tuple_fraction = 1.0")
        with psycopg.ServerCursor(connection.connection, "docket_streamed_rows") as cursor:
            cursor.format = psycopg.pq.Format.BINARY
            yield cursor


def fetch_columns(sql: str, params, dtypes, chunk_rows: int | None = None, expected_rows: int | None = None):
    """Run one SELECT and return its columns as numpy arrays, converting chunk by chunk.

    Chunks keep peak memory to one chunk of Python row objects instead of all of them;
    `expected_rows` (a count the caller already has) lets the columns be filled in place
    rather than concatenated from parts, which would hold every column twice.
    """
    filled = ColumnFiller(dtypes, expected_rows)
    with streaming_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk_rows or CHUNK_ROWS):
            filled.add(rows)
    return filled.columns()


class ColumnFiller:
    """Columns built from chunks of row tuples: in place when the row count is known, else from parts."""

    def __init__(self, dtypes, expected_rows: int | None):
        self.dtypes = dtypes
        self.used = 0
        self.out = [np.empty(expected_rows, dtype) for dtype in dtypes] if expected_rows is not None else None
        self.parts = [[] for _ in dtypes]

    def add(self, rows: list[tuple]) -> None:
        n = len(rows)
        in_place = self.out is not None and self.used + n <= len(self.out[0])
        for index, (column, dtype) in enumerate(zip(zip(*rows, strict=True), self.dtypes, strict=True)):
            values = np.fromiter(column, dtype=dtype, count=n)
            if in_place:
                self.out[index][self.used : self.used + n] = values
            else:
                self.parts[index].append(values)
        if in_place:
            self.used += n
        elif self.out is not None:
            # More rows than expected (verdicts written meanwhile): keep the filled part as a first chunk.
            for part, column in zip(self.parts, self.out, strict=True):
                part.insert(0, column[: self.used])
            self.out = None

    def columns(self) -> list[np.ndarray]:
        if self.out is not None:
            return [column[: self.used] for column in self.out]
        return [
            np.concatenate(part) if part else np.empty(0, dtype)
            for part, dtype in zip(self.parts, self.dtypes, strict=True)
        ]


def verdict_rows_sql(run_ids: list[int], max_judge_version_id: int) -> tuple[str, tuple, int | None]:
    """Return (SELECT, its column dtypes, packing span or None) of the report's verdict fetch."""
    placeholders = ", ".join(["%s"] * len(run_ids))
    span = 1 << int(max_judge_version_id * 4 + 3).bit_length()
    draw = f"run_id * {1 << DRAW_RUN_SHIFT} + repeat"
    where = f"FROM {Verdict._meta.db_table} WHERE run_id IN ({placeholders})"
    if span <= MAX_PACKING_SPAN:
        sql = f"SELECT query_id * {span} + judge_version_id * 4 + {DECISION_SQL}, {draw}, {LATENCY_SQL} {where}"
        return sql, (np.int64, np.int64, np.float64), span
    sql = f"SELECT query_id, judge_version_id * 4 + {DECISION_SQL}, {draw}, {LATENCY_SQL} {where}"
    return sql, (np.int64, np.int64, np.int64, np.float64), None


def fetch_verdict_rows(
    run_ids: list[int], max_judge_version_id: int, expected_rows: int | None = None
) -> tuple[np.ndarray, ...]:
    """Fetch (query id, judge version id, decision code, draw key, latency) of the runs' verdicts.

    A latency that was not measured (imported verdicts) is NaN: left out of percentiles and means.
    `expected_rows` (how many verdicts the runs have, when the caller counted them) saves a copy.
    """
    if not run_ids:
        empty = np.empty(0, np.int64)
        return empty, empty, np.empty(0, np.int8), empty, np.empty(0, np.float64)
    sql, dtypes, span = verdict_rows_sql(run_ids, max_judge_version_id)
    if span is not None:
        packed, draw_key, latency = fetch_columns(sql, run_ids, dtypes, expected_rows=expected_rows)
        # The span is a power of two: mask off (judge, code), then shift the query ids out in place.
        judge_ids = np.bitwise_and(packed, span - 1)
        query_ids = np.right_shift(packed, span.bit_length() - 1, out=packed)
    else:
        query_ids, judge_ids, draw_key, latency = fetch_columns(sql, run_ids, dtypes, expected_rows=expected_rows)
    # Codes are 0..2: one byte each, not eight (35 MB at five million verdicts). Every step
    # writes in place or into the byte column: one new wide array where there were three, whose
    # fresh pages cost 0.1–0.3 s at five million (issue 33).
    codes = np.empty(len(judge_ids), dtype=np.int8)
    np.bitwise_and(judge_ids, 3, out=codes, casting="unsafe")
    np.right_shift(judge_ids, 2, out=judge_ids)
    latency[latency < 0] = np.nan
    return query_ids, judge_ids, codes, draw_key, latency
