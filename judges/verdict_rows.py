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
from django.db import connection

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
def raw_cursor():
    """Yield a DB-API cursor; on PostgreSQL one that receives results in binary."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.format = psycopg.pq.Format.BINARY
        yield cursor


def fetch_columns(sql: str, params, dtypes, chunk_rows: int = CHUNK_ROWS) -> list[np.ndarray]:
    """Run one SELECT and return its columns as numpy arrays, converting chunk by chunk.

    Chunks keep peak memory to one chunk of Python row objects instead of all of them.
    """
    parts = [[] for _ in dtypes]
    with raw_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk_rows):
            for part, column, dtype in zip(parts, zip(*rows, strict=True), dtypes, strict=True):
                part.append(np.fromiter(column, dtype=dtype, count=len(rows)))
    return [np.concatenate(part) if part else np.empty(0, dtype) for part, dtype in zip(parts, dtypes, strict=True)]


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


def fetch_verdict_rows(run_ids: list[int], max_judge_version_id: int) -> tuple[np.ndarray, ...]:
    """Fetch (query id, judge version id, decision code, draw key, latency) of the runs' verdicts.

    A latency that was not measured (imported verdicts) is NaN: left out of percentiles and means.
    """
    if not run_ids:
        empty = np.empty(0, np.int64)
        return empty, empty, empty, empty, np.empty(0, np.float64)
    sql, dtypes, span = verdict_rows_sql(run_ids, max_judge_version_id)
    if span is not None:
        packed, draw_key, latency = fetch_columns(sql, run_ids, dtypes)
        query_ids, judge_and_code = np.divmod(packed, span)
    else:
        query_ids, judge_and_code, draw_key, latency = fetch_columns(sql, run_ids, dtypes)
    judge_ids, codes = np.divmod(judge_and_code, 4)
    latency[latency < 0] = np.nan
    return query_ids, judge_ids, codes, draw_key, latency
