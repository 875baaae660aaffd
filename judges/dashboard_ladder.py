"""What the dashboard shows beside the judges: the verification ladder and each interval's budget.

Display glue only: the ladder rows are the report's `ladder` (judges.ladder), the widths
and halving counts come from judges.interval_budget.
"""

from __future__ import annotations

from judges.class_sets import class_members
from judges.interval_budget import interval_budget


def ladder_rows(*, report: dict) -> list[dict]:
    """Return the report's ladder rows, each with its bar's width in percent for the table."""
    return [{**row, "bar": round(100 * (row["catch"] or 0), 1)} for row in report.get("ladder", [])]


def budget_rows(*, data) -> dict:
    """Return {"classes", "rows"}: per judge, its catch-rate width and items to halve it, per class."""
    classes = sorted(class_members(data.error_class, data.is_wrong))
    rows = []
    for column, judge in enumerate(data.judges):
        budget = interval_budget(
            probs=data.probs[:, column], is_wrong=data.is_wrong, error_class=data.error_class, classes=classes
        )
        rows.append(
            {
                "judge": judge,
                "overall": budget["overall"],
                "by_class": [budget["by_class"][slug] for slug in classes],
            }
        )
    return {"classes": classes, "rows": rows}
