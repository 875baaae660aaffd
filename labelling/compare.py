"""Compare two result sets the way rung 6 of the verification ladder does.

Order-insensitive (as multisets of rows), numbers rounded to two decimals, strings
case-folded. Column names are reported but not compared: a generated query and its
reference often alias the same column differently. The outcome is a suggestion shown
to a labeller, never a label.
"""

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

MAX_EXAMPLES = 5


def normalise_value(value):
    """Return the comparable form of one cell."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float | Decimal):
        number = float(value)
        if math.isnan(number):
            return "nan"
        rounded = round(number, 2)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, bytes):
        return value.hex()
    return str(value).casefold()


def normalise_row(row: Sequence) -> tuple:
    return tuple(normalise_value(value) for value in row)


def _sort_key(row: tuple):
    return tuple((value is None, type(value).__name__, str(value)) for value in row)


@dataclass
class Comparison:
    """Whether two result sets match, and where they differ when they do not."""

    match: bool
    row_count_a: int
    row_count_b: int
    columns_a: list[str]
    columns_b: list[str]
    column_count_matches: bool
    only_in_a: list[tuple] = field(default_factory=list)
    only_in_b: list[tuple] = field(default_factory=list)

    @property
    def summary(self) -> str:
        if self.match:
            return f"Results match ({self.row_count_a} rows)."
        if not self.column_count_matches:
            return f"Different shapes: {len(self.columns_a)} columns against {len(self.columns_b)}."
        if self.row_count_a != self.row_count_b:
            return f"Different row counts: {self.row_count_a} against {self.row_count_b}."
        return f"Same row count ({self.row_count_a}) but different values."


def compare_result_sets(
    columns_a: Sequence[str], rows_a: Sequence[Sequence], columns_b: Sequence[str], rows_b: Sequence[Sequence]
) -> Comparison:
    """Compare result set A (the labelled SQL) with B (the reference SQL)."""
    column_count_matches = len(columns_a) == len(columns_b)
    bag_a = Counter(normalise_row(row) for row in rows_a)
    bag_b = Counter(normalise_row(row) for row in rows_b)
    only_a = sorted((bag_a - bag_b).elements(), key=_sort_key)[:MAX_EXAMPLES]
    only_b = sorted((bag_b - bag_a).elements(), key=_sort_key)[:MAX_EXAMPLES]
    return Comparison(
        match=column_count_matches and bag_a == bag_b,
        row_count_a=len(rows_a),
        row_count_b=len(rows_b),
        columns_a=list(columns_a),
        columns_b=list(columns_b),
        column_count_matches=column_count_matches,
        only_in_a=only_a,
        only_in_b=only_b,
    )
