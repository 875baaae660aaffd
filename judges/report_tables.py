"""The calibration report as text: the CSV table and the fixed-width table of `judge_report`.

Used by the `judge_report` command and the dashboard's CSV download (`judges/export_views.py`).
"""

from config.exports import csv_text

# Scalar judge columns for CSV and the table, in contract order.
JUDGE_COLUMNS = [
    "name",
    "version",
    "runs",
    "items",
    "repeats",
    "verdicts",
    "errors",
    "unjudged",
    "catch_rate",
    "catch_rate_ci95",
    "false_reject_rate",
    "false_reject_rate_ci95",
    "flag_rate",
    "flip_rate",
    "kappa_vs_gold",
    "precision",
    "precision_ci95",
    "npv",
    "npv_ci95",
    "class_accuracy",
    "class_accuracy_ci95",
    "cost_per_verdict_usd",
    "attempts_per_accepted",
    "cost_per_accepted_usd",
    "break_even_error_cost_usd",
    "latency_ms_p50",
    "latency_ms_p95",
]
TABLE_COLUMNS = [
    ("judge", lambda j: f"{j['name']} v{j['version']}" + (" [simulated]" if j.get("simulated") else "")),
    ("runs", lambda j: ",".join(map(str, j["runs"])) or "-"),
    ("items", lambda j: str(j["items"])),
    ("repeats", lambda j: str(j["repeats"])),
    ("verdicts", lambda j: str(j["verdicts"])),
    ("errors", lambda j: str(j["errors"])),
    ("unjudged", lambda j: str(j["unjudged"])),
    ("catch", lambda j: percent_with_interval(j["catch_rate"], j["catch_rate_ci95"])),
    ("false reject", lambda j: percent_with_interval(j["false_reject_rate"], j["false_reject_rate_ci95"])),
    ("flag", lambda j: percent(j["flag_rate"])),
    ("flip", lambda j: percent(j["flip_rate"])),
    ("kappa", lambda j: "-" if j["kappa_vs_gold"] is None else f"{j['kappa_vs_gold']:.3f}"),
    ("precision", lambda j: percent(j["precision"])),
    ("npv", lambda j: percent(j["npv"])),
    ("class acc.", lambda j: percent(j["class_accuracy"])),
    ("$/verdict", lambda j: money(j["cost_per_verdict_usd"])),
    ("$/accepted", lambda j: money(j["cost_per_accepted_usd"])),
    ("break-even $", lambda j: money(j["break_even_error_cost_usd"])),
    ("p50 ms", lambda j: number(j["latency_ms_p50"])),
    ("p95 ms", lambda j: number(j["latency_ms_p95"])),
]


def percent(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def percent_with_interval(value, interval) -> str:
    if value is None:
        return "-"
    return f"{percent(value)} [{100 * interval[0]:.1f}-{100 * interval[1]:.1f}]"


def money(value) -> str:
    return "-" if value is None else f"{value:.4f}"


def number(value) -> str:
    return "-" if value is None else f"{value:.0f}"


def report_csv_table(report: dict) -> tuple[list[str], list[list]]:
    """Return (header, rows): one row per judge version; intervals split into _lo/_hi, classes into columns.

    With slices, a first column says which slice a row is (`(all)` for the whole report).
    """
    groups = [("(all)", report["judges"])]
    if report.get("slices"):
        groups += [(value, entry["judges"]) for value, entry in report["slices"]["values"].items()]
    every = [judge for _, judges in groups for judge in judges]
    classes = sorted({slug for judge in every for slug in judge["catch_rate_by_error_class"]})
    categories = sorted({name for judge in every for name in judge.get("catch_rate_by_category", {})})
    header = [f"slice:{report['slices']['key']}"] if report.get("slices") else []
    for column in JUDGE_COLUMNS:
        header += [f"{column}_lo", f"{column}_hi"] if column.endswith("_ci95") else [column]
    header += [f"catch_rate_{slug}" for slug in classes] + [f"catch_rate_category_{name}" for name in categories]
    rows = []
    for value, judges in groups:
        for judge in judges:
            row = [value] if report.get("slices") else []
            for column in JUDGE_COLUMNS:
                cell = judge[column]
                if column.endswith("_ci95"):
                    row += list(cell) if cell else ["", ""]
                elif column == "runs":
                    row.append(";".join(map(str, cell)))
                else:
                    row.append("" if cell is None else cell)
            row += [_blank(judge["catch_rate_by_error_class"].get(slug)) for slug in classes]
            row += [_blank(judge.get("catch_rate_by_category", {}).get(name)) for name in categories]
            rows.append(row)
    return header, rows


def _blank(value):
    return "" if value is None else value


def report_as_csv(report: dict) -> str:
    """Return the judges as CSV; judge names are free text (imported), so cells are neutralised."""
    return csv_text(*report_csv_table(report))


def report_as_table(report: dict) -> str:
    """Return an aligned text table of the judges, then the pairs."""
    items = report["items"]
    lines = [
        f"{report['gold_set']} v{report['version']}"
        f"{'' if report.get('split', 'all') == 'all' else ' (' + report['split'] + ' split)'}: {items['total']} items "
        f"({items['wrong']} wrong, {items['correct']} correct), {report['left_out']['summary']}; "
        f"{report['run_selection']['rule']}: runs {', '.join(_run_name(report, i) for i in report['runs']) or 'none'}"
    ]
    lines += [f"warning: {warning}" for warning in report["warnings"]]
    lines += judges_table(report["judges"])
    if report.get("slices"):
        for value, entry in report["slices"]["values"].items():
            lines += ["", f"{report['slices']['key']} = {value}: {entry['items']} items"]
            lines += judges_table(entry["judges"])
    if report["pairs"]:
        lines.append("")
        lines.append("pair  both_missed  miss_jaccard  union_catch  union_false_reject  kappa")
        for pair in report["pairs"]:
            kappa = "-" if pair["kappa"] is None else f"{pair['kappa']:.3f}"
            jaccard = "-" if pair["miss_jaccard"] is None else f"{pair['miss_jaccard']:.3f}"
            lines.append(
                f"{pair['a']} v{pair['a_version']} + {pair['b']} v{pair['b_version']}  {pair['both_missed']:.2f}  "
                f"{jaccard}  {percent(pair['union_catch_rate'])}  {percent(pair['union_false_reject_rate'])}  {kappa}"
            )
    if report.get("ladder"):
        lines += ["", "rung  cumulative_catch  cumulative_false_reject  marginal_catch"]
        lines += [
            f"{row['rung']}  {percent(row['catch'])}  {percent(row['false_reject'])}  {percent(row['marginal_catch'])}"
            for row in report["ladder"]
        ]
    return "\n".join(lines) + "\n"


def _run_name(report: dict, run_id: int) -> str:
    label = report.get("run_labels", {}).get(run_id)
    return f"{run_id} ({label})" if label else str(run_id)


def judges_table(judges: list[dict]) -> list[str]:
    """Return the aligned lines of a table of judge entries."""
    rows = [[title for title, _ in TABLE_COLUMNS]] + [[cell(j) for _, cell in TABLE_COLUMNS] for j in judges]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COLUMNS))]
    return ["  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)) for row in rows]
