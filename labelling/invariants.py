"""Answer-free invariants of an item: what a correct result must look like, written in advance.

Seed 002: an invariant you could write before anyone knew the answer, from the question
and the schema alone. A labeller writes them on the item in a small JSON form:

    {
      "columns": 2,                               # the result has exactly 2 columns
      "rows": {"min": 1, "max": 5},               # row-count bounds (either may be left out)
      "non_negative": ["revenue"],                # these columns hold no negative number
      "values_in": {"status": ["completed"]}      # this column's values lie in the set
    }

`invariants_validate` names every bad field; `invariants_check` is a pure function of a
result (column names and rows) that lists what the result breaks. Column names match
case-insensitively. Calibrated bands (a plausible magnitude) are left out on purpose: they
need the answer, which the runtime does not have.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from decimal import Decimal

KINDS = ("columns", "rows", "non_negative", "values_in")
# The error class a broken invariant most often points at; only a suggestion, the label decides.
LIKELY_CLASS = {
    "columns": "misread_intent",
    "missing_column": "misread_intent",
    "rows_below": "dropped_rows",
    "rows_above": "join_fanout",
    "non_negative": "wrong_measure",
    "values_in": "missing_filter",
}
MAX_SET_SIZE = 200


class InvariantsInvalid(ValueError):
    """The invariants are not in the declarative form; `errors` maps each bad field to why."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))


@dataclass(frozen=True)
class Violation:
    kind: str
    message: str

    @property
    def error_class(self) -> str:
        return LIKELY_CLASS.get(self.kind, "other")


@dataclass(frozen=True)
class InvariantsOutcome:
    violations: list[Violation]
    # What could not be decided on this result (a row cap cut it): a fault, not a verdict.
    undecided: list[str]


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _column_names(value, field: str, errors: dict[str, str]) -> None:
    if not isinstance(value, list) or not value:
        errors[field] = "must be a non-empty list of column names"
    elif not all(isinstance(name, str) and name.strip() for name in value):
        errors[field] = "every entry must be a column name (a non-empty string)"


def _validate_rows(value, errors: dict[str, str]) -> None:
    if not isinstance(value, dict) or not value:
        errors["rows"] = 'must be an object with "min" and/or "max"'
        return
    for key in sorted(set(value) - {"min", "max"}):
        errors[f"rows.{key}"] = 'unknown bound; use "min" or "max"'
    for key in ("min", "max"):
        if key in value and not _is_count(value[key]):
            errors[f"rows.{key}"] = "must be a non-negative integer"
    low, high = value.get("min"), value.get("max")
    if _is_count(low) and _is_count(high) and low > high:
        errors["rows"] = f"min ({low}) is greater than max ({high})"


def _validate_values_in(value, errors: dict[str, str]) -> None:
    if not isinstance(value, dict) or not value:
        errors["values_in"] = "must be an object mapping a column name to its allowed values"
        return
    for column, allowed in value.items():
        field = f"values_in.{column}"
        if not column.strip():
            errors["values_in"] = "a column name may not be empty"
        elif not isinstance(allowed, list) or not allowed:
            errors[field] = "must be a non-empty list of allowed values"
        elif len(allowed) > MAX_SET_SIZE:
            errors[field] = f"at most {MAX_SET_SIZE} allowed values"
        elif not all(v is None or isinstance(v, str | int | float) for v in allowed):
            errors[field] = "values must be strings, numbers or null"


def invariants_validate(*, invariants) -> dict:
    """Return the invariants in their stored form, or raise InvariantsInvalid naming each bad field.

    None and {} both mean "no invariants".
    """
    if invariants is None:
        return {}
    if not isinstance(invariants, dict):
        raise InvariantsInvalid({"invariants": "must be a JSON object"})
    errors: dict[str, str] = {}
    for key in sorted(set(invariants) - set(KINDS)):
        errors[key] = f"unknown invariant; use one of {', '.join(KINDS)}"
    if "columns" in invariants and not (_is_count(invariants["columns"]) and invariants["columns"] > 0):
        errors["columns"] = "must be a positive integer (the number of result columns)"
    if "rows" in invariants:
        _validate_rows(invariants["rows"], errors)
    if "non_negative" in invariants:
        _column_names(invariants["non_negative"], "non_negative", errors)
    if "values_in" in invariants:
        _validate_values_in(invariants["values_in"], errors)
    if errors:
        raise InvariantsInvalid(errors)
    return dict(invariants)


def _column_index(columns: list[str]) -> dict[str, int]:
    index = {}
    for position, name in enumerate(columns):
        index.setdefault(str(name).lower(), position)
    return index


def _negative(value) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, numbers.Number | Decimal) and value < 0


def _same(value, allowed: list) -> bool:
    """Compare as the result renders them: 1 and "1" are the same value, NULL only matches null."""
    if value is None:
        return None in allowed
    return str(value) in {str(a) for a in allowed if a is not None}


def _check_rows(bounds: dict, n_rows: int, truncated: bool) -> tuple[list[Violation], list[str]]:
    low, high = bounds.get("min"), bounds.get("max")
    if high is not None and n_rows > high:
        return [Violation("rows_above", f"{n_rows}{'+' if truncated else ''} rows; at most {high} expected")], []
    if truncated and high is not None:
        return [], [f"the result was cut at {n_rows} rows, so the bound of at most {high} rows is undecided"]
    if low is not None and n_rows < low and not truncated:
        return [Violation("rows_below", f"{n_rows} rows; at least {low} expected")], []
    return [], []


def _check_columns(invariants: dict, columns: list[str], rows: list) -> list[Violation]:
    violations = []
    index = _column_index(columns)
    for name in invariants.get("non_negative") or []:
        position = index.get(name.lower())
        if position is None:
            violations.append(Violation("missing_column", f"the result has no column {name}"))
            continue
        negatives = [row[position] for row in rows if _negative(row[position])]
        if negatives:
            violations.append(
                Violation("non_negative", f"{name} has {len(negatives)} negative value(s), e.g. {negatives[0]}")
            )
    for name, allowed in (invariants.get("values_in") or {}).items():
        position = index.get(name.lower())
        if position is None:
            violations.append(Violation("missing_column", f"the result has no column {name}"))
            continue
        outside = sorted({str(row[position]) for row in rows if not _same(row[position], allowed)})
        if outside:
            shown = ", ".join(outside[:5]) + (" …" if len(outside) > 5 else "")
            violations.append(Violation("values_in", f"{name} has values outside the allowed set: {shown}"))
    return violations


def invariants_check(*, invariants: dict, columns: list[str], rows: list, truncated: bool = False) -> InvariantsOutcome:
    """Return which of the item's invariants a result breaks (and which it cannot decide).

    `truncated` says a row cap cut the result: a bound on the row count may then be
    undecided, while a value check over the rows seen still finds a violation.
    """
    violations: list[Violation] = []
    undecided: list[str] = []
    expected_columns = invariants.get("columns")
    if expected_columns is not None and len(columns) != expected_columns:
        violations.append(Violation("columns", f"{len(columns)} columns; {expected_columns} expected"))
    if invariants.get("rows"):
        broken, unknown = _check_rows(invariants["rows"], len(rows), truncated)
        violations += broken
        undecided += unknown
    violations += _check_columns(invariants, columns, rows)
    return InvariantsOutcome(violations=violations, undecided=undecided)
