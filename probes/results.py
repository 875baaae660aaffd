"""What a run of SQL returns: the JSON contract, and the caps on rows, bytes and cells.

Both runners (`probes.sqlite_runner`, `probes.postgres_runner`) keep rows through a
`ResultCollector`, which stops at the row cap or the byte cap and cuts a cell longer than
the cell cap, marking it with the length it had.
"""

import base64
import datetime
import decimal
import uuid
from dataclasses import asdict, dataclass, field

from django.conf import settings

CONTRACT_KEYS = ("allowed", "reason", "executed", "rows", "columns", "elapsed_ms", "error")


@dataclass
class ExecutionResult:
    allowed: bool
    reason: str | None = None
    executed: bool = False
    columns: list[str] = field(default_factory=list)
    rows: list[list] = field(default_factory=list)
    elapsed_ms: float = 0.0
    error: str | None = None
    # Beyond the JSON contract: whether a cap cut the result (and which), how many cells
    # were cut, why it failed, and whether a timed-out query's backend was seen gone.
    truncated: bool = False
    truncated_by: str | None = None
    cells_truncated: int = 0
    result_bytes: int = 0
    timed_out: bool = False
    error_code: str | None = None
    backend_gone: bool | None = None

    def as_dict(self) -> dict:
        """Return the `run_sql --format json` contract."""
        data = asdict(self)
        return {key: data[key] for key in CONTRACT_KEYS}


def json_safe(value):
    """Turn a database value into something json.dumps accepts without losing meaning."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, decimal.Decimal):
        return float(value) if value == value.to_integral_value() or abs(value) < 1e15 else str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    return str(value)


class CutCell(str):
    """A cell already cut to the cell cap and marked (kept as is)."""


def truncation_mark(kept: str, total_bytes: int, cell_cap: int | None = None) -> CutCell:
    """Return a cut cell: its first bytes and a mark saying how long it was."""
    cap = settings.WAREHOUSE_CELL_MAX_BYTES if cell_cap is None else cell_cap
    return CutCell(f"{kept}… [cut: {total_bytes} bytes, first {cap} kept]")


class ResultCollector:
    """Keep rows until the row cap or the byte cap; cut long cells; count what was kept.

    The caps default to the settings; a SQLite query's own process (`probes.sqlite_worker`),
    which reads no settings, is given them.
    """

    def __init__(self, row_cap: int, *, byte_cap: int | None = None, cell_cap: int | None = None):
        self.row_cap = row_cap
        self.byte_cap = settings.WAREHOUSE_RESULT_MAX_BYTES if byte_cap is None else byte_cap
        self.cell_cap = settings.WAREHOUSE_CELL_MAX_BYTES if cell_cap is None else cell_cap
        self.rows: list[list] = []
        self.bytes = 0
        self.cells_truncated = 0
        self.truncated_by: str | None = None

    def cell(self, value):
        if isinstance(value, CutCell):
            return str(value)
        value = json_safe(value)
        if isinstance(value, str) and len(value) * 4 > self.cell_cap:
            encoded = value.encode()
            if len(encoded) > self.cell_cap:
                self.cells_truncated += 1
                value = truncation_mark(encoded[: self.cell_cap].decode(errors="ignore"), len(encoded), self.cell_cap)
        return value

    def add(self, row) -> bool:
        """Keep one row; return False once a cap is reached (the row is then not kept)."""
        if len(self.rows) >= self.row_cap:
            self.truncated_by = "row_cap"
            return False
        kept = [self.cell(value) for value in row]
        size = sum(_size(value) for value in kept)
        if self.bytes + size > self.byte_cap:
            self.truncated_by = "byte_cap"
            return False
        self.bytes += size
        self.rows.append(kept)
        return True

    def result(self, columns) -> ExecutionResult:
        return ExecutionResult(
            True,
            executed=True,
            columns=list(columns),
            rows=self.rows,
            truncated=self.truncated_by is not None,
            truncated_by=self.truncated_by,
            cells_truncated=self.cells_truncated,
            result_bytes=self.bytes,
        )


def _size(value) -> int:
    """Approximate bytes a kept value takes in the stored (JSON) result."""
    if value is None or isinstance(value, bool | int | float):
        return 8
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, list):
        return sum(_size(item) for item in value) + 2
    if isinstance(value, dict):
        return sum(len(str(key)) + _size(item) for key, item in value.items()) + 2
    return len(str(value))
