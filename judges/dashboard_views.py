"""The comparison dashboard: judges, miss-set overlap, ensembles, error classes, items.

Every number comes from judges.report (which computes with judges.metrics); this module
only picks the gold-set version, shapes figures into chart geometry (server-rendered SVG)
and renders. Charts need no JavaScript; static/js/dashboard.js adds table sorting.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from config.roles import ML_ENGINEER, role_required
from judges import metrics
from judges.models import CalibrationRun, RunStatus, Verdict
from judges.report import CalibrationData, ensemble_entry, ensembles_up_to, load_calibration, report_from_data
from labelling.models import GoldSetVersion, Query

CHART_WIDTH, CHART_HEIGHT, MARGIN = 640, 300, 48
PALETTE = ["#2450a6", "#b42318", "#1f7a4d", "#b54708", "#6941c6", "#0e7090", "#c11574", "#4e5ba6", "#667085"]
UPSET_COLUMNS = 15


@dataclass(frozen=True)
class ReportOptions:
    """What the page's GET parameters ask for, validated."""

    generation_cost_usd: float = 0.0
    baseline: str | None = None
    false_reject_ceiling: float = 0.2

    @classmethod
    def from_request(cls, request) -> ReportOptions:
        return cls(
            generation_cost_usd=bounded_float(request.GET.get("generation_cost"), 0.0, 0.0, 100.0),
            baseline=request.GET.get("baseline") or None,
            false_reject_ceiling=bounded_float(request.GET.get("fr_ceiling"), 0.2, 0.0, 1.0),
        )


def bounded_float(raw, default: float, low: float, high: float) -> float:
    """Parse a float from a query string, falling back to the default when absent or bad."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return default
    return min(max(value, low), high) if np.isfinite(value) else default


def load_for(version_id: int, request) -> tuple[CalibrationData, dict, ReportOptions]:
    """Load the version's arrays and report; drop an unknown baseline rather than fail."""
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=version_id)
    data = load_calibration(gold_set_version=version)
    options = ReportOptions.from_request(request)
    try:
        report = report_from_data(data, generation_cost_usd=options.generation_cost_usd, baseline=options.baseline)
    except ValueError:
        options = ReportOptions(options.generation_cost_usd, None, options.false_reject_ceiling)
        report = report_from_data(data, generation_cost_usd=options.generation_cost_usd)
    return data, report, options


@role_required(ML_ENGINEER)
def dashboard_index(request):
    """Open the dashboard on the gold-set version with the latest completed run."""
    latest = (
        CalibrationRun.objects.filter(status=RunStatus.COMPLETED)
        .order_by("-created_at")
        .only("gold_set_version")
        .first()
    )
    if latest is None:
        return render(request, "judges/dashboard_empty.html", {"versions": []})
    target = reverse("judges:dashboard", kwargs={"version_id": latest.gold_set_version_id})
    return redirect(f"{target}?{request.GET.urlencode()}" if request.GET else target)


@role_required(ML_ENGINEER)
def dashboard(request, version_id: int):
    """Show judges, overlap, ensembles and error classes for one gold-set version."""
    data, report, options = load_for(version_id, request)
    context = {
        "version": data.gold_set_version,
        "versions": GoldSetVersion.objects.select_related("gold_set").filter(calibration_runs__isnull=False).distinct(),
        "report": report,
        "options": options,
        "judges": judge_rows(data, report),
        "heatmaps": [heatmap(data, report, "both_missed"), heatmap(data, report, "miss_jaccard")],
        "upset": upset_chart(data),
        "scatter": ensemble_scatter(data, options),
        "class_chart": error_class_chart(report),
        "rules": metrics.ENSEMBLE_RULES,
    }
    return render(request, "judges/dashboard.html", context)


@role_required(ML_ENGINEER)
def dashboard_report_json(request, version_id: int):
    """Download the same report dict as `judge_report --format json`."""
    _, report, _ = load_for(version_id, request)
    response = JsonResponse(report, json_dumps_params={"indent": 2})
    filename = f"{report['gold_set']}-v{report['version']}-judge-report.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@role_required(ML_ENGINEER)
def dashboard_ensemble(request, version_id: int):
    """Return the explorer's result for the chosen judges and rule, and marginal values."""
    data, _, options = load_for(version_id, request)
    members = chosen_columns(data, request.GET.getlist("judge"))
    rule = request.GET.get("rule", "any")
    context = {"version": data.gold_set_version, "members": members, "rule": rule}
    if rule not in metrics.ENSEMBLE_RULES:
        context["error"] = f"Unknown rule {rule!r}."
    elif not members:
        context["error"] = "Pick at least one judge."
    else:
        k = int(bounded_float(request.GET.get("k"), 1, 1, len(members)))
        try:
            cost = options.generation_cost_usd
            context["result"] = ensemble_entry(data, members, rule, generation_cost_usd=cost, k=k)
        except ValueError as exc:
            context["error"] = str(exc)
        context["marginal"] = marginal_values(data, members, options.generation_cost_usd)
    return render(request, "judges/dashboard.html#ensemble-result", context)


@role_required(ML_ENGINEER)
def dashboard_missed(request, version_id: int):
    """List wrong items missed by exactly / at least the judges named (a heatmap or UpSet click)."""
    data, _, _ = load_for(version_id, request)
    columns = chosen_columns(data, request.GET.getlist("judge"))
    exact = request.GET.get("exact") == "1"
    missed = majority_misses(data)
    wanted = np.zeros(len(data.judges), dtype=bool)
    wanted[columns] = True
    if exact:
        rows = np.flatnonzero(data.is_wrong & (missed == wanted).all(axis=1))
    else:
        rows = np.flatnonzero(data.is_wrong & missed[:, wanted].all(axis=1)) if columns else np.array([], dtype=int)
    items = [
        {
            "query_id": int(data.query_ids[row]),
            "external_id": data.external_ids[row],
            "error_class": data.error_class[row],
            "probs": [none_if_nan(data.probs[row, column]) for column in columns],
        }
        for row in rows
    ]
    context = {
        "version": data.gold_set_version,
        "judges": [data.judges[c] for c in columns],
        "items": items,
        "exact": exact,
    }
    return render(request, "judges/dashboard.html#missed-items", context)


@role_required(ML_ENGINEER)
def dashboard_item(request, version_id: int, query_id: int):
    """Show every verdict of every judge on one item, side by side."""
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=version_id)
    item = version.items.filter(query_id=query_id).first()
    if item is None:
        raise Http404("That query is not an item of this gold-set version.")
    query = get_object_or_404(Query, pk=query_id)
    verdicts = (
        Verdict.objects.filter(query=query, run__gold_set_version=version)
        .select_related("judge_version__judge", "run")
        .order_by("judge_version__judge__name", "judge_version__number", "run_id", "repeat")
    )
    columns = {}
    for verdict in verdicts:
        columns.setdefault(verdict.judge_version, []).append(verdict)
    context = {"version": version, "item": item, "query": query, "columns": columns}
    return render(request, "judges/dashboard_item.html", context)


# --- shaping figures for the page -----------------------------------------------------------


def none_if_nan(value) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def chosen_columns(data: CalibrationData, judge_version_ids: list[str]) -> list[int]:
    """Map judge version ids from the query string to columns, ignoring unknown ones."""
    wanted = {int(value) for value in judge_version_ids if value.isdigit()}
    return [column for column, judge in enumerate(data.judges) if judge.id in wanted]


def majority_misses(data: CalibrationData) -> np.ndarray:
    """Return True where a judge's majority decision on an item is accept (unjudged: False)."""
    return (data.probs < 0.5) & ~np.isnan(data.probs)


def judge_rows(data: CalibrationData, report: dict) -> list[dict]:
    """Pair each judge entry with its judge version's description and colour."""
    return [
        {"entry": entry, "judge": judge, "ref": f"{judge.name}:{judge.number}", "colour": PALETTE[i % len(PALETTE)]}
        for i, (entry, judge) in enumerate(zip(report["judges"], data.judges, strict=True))
    ]


def heatmap(data: CalibrationData, report: dict, key: str) -> dict:
    """Return the cells of a judges × judges heatmap of a pair figure (diagonal left blank)."""
    n = len(data.judges)
    values = {}
    for (a, b), pair in zip(itertools.combinations(range(n), 2), report["pairs"], strict=True):
        values[(a, b)] = values[(b, a)] = pair[key]
    top = max([v for v in values.values() if v is not None] or [1.0]) or 1.0
    size = 44
    cells = []
    for a in range(n):
        for b in range(n):
            value = values.get((a, b))
            cells.append(
                {
                    "x": 150 + b * size,
                    "y": 10 + a * size,
                    "size": size - 2,
                    "value": value,
                    "text": "" if value is None else (f"{value:.2f}" if key == "miss_jaccard" else f"{value:.1f}"),
                    "opacity": 0 if value is None else round(0.12 + 0.88 * value / top, 3),
                    "query": f"judge={data.judges[a].id}&judge={data.judges[b].id}" if a != b else "",
                    "title": f"{data.judges[a].label} × {data.judges[b].label}",
                }
            )
    labels = [{"y": 10 + i * size + size / 2, "text": judge.label} for i, judge in enumerate(data.judges)]
    columns = [{"x": 150 + i * size + size / 2, "text": f"{i + 1}"} for i in range(n)]
    return {
        "key": key,
        "title": "Both missed (expected count)" if key == "both_missed" else "Miss-set Jaccard",
        "cells": cells,
        "labels": labels,
        "columns": columns,
        # Column numbers under the grid match the numbered row labels.
        "column_label_y": 10 + n * size + 14,
        "width": 160 + n * size,
        "height": 30 + n * size,
    }


def upset_chart(data: CalibrationData) -> dict:
    """Return an UpSet-style chart: bars of how many wrong items each set of judges misses."""
    missed = majority_misses(data)[data.is_wrong]
    patterns = Counter(tuple(row) for row in missed.tolist() if any(row))
    top = patterns.most_common(UPSET_COLUMNS)
    n = len(data.judges)
    column_width, row_height, bar_height, left = 30, 22, 140, 150
    peak = max([count for _, count in top] or [1])
    columns = []
    for index, (pattern, count) in enumerate(top):
        x = left + index * column_width
        height = round(bar_height * count / peak, 1)
        members = [i for i, flag in enumerate(pattern) if flag]
        columns.append(
            {
                "x": x,
                # 20 px of headroom keeps the count above the tallest bar inside the chart.
                "bar_y": 20 + bar_height - height,
                "bar_height": height,
                "count": count,
                "dots": [{"y": 30 + bar_height + i * row_height, "filled": bool(pattern[i])} for i in range(n)],
                "line": (30 + bar_height + members[0] * row_height, 30 + bar_height + members[-1] * row_height),
                "query": "&".join(f"judge={data.judges[i].id}" for i in members) + "&exact=1",
                "title": " + ".join(data.judges[i].label for i in members) + f": {count} wrong items",
            }
        )
    labels = [{"y": 34 + bar_height + i * row_height, "text": judge.label} for i, judge in enumerate(data.judges)]
    return {
        "columns": columns,
        "labels": labels,
        "width": left + max(len(top), 1) * column_width + 10,
        "height": 40 + bar_height + n * row_height,
        "caught_by_all": int((~missed).all(axis=1).sum()) if n else 0,
    }


def scale(value: float, low: float, high: float, out_low: float, out_high: float) -> float:
    if high <= low:
        return (out_low + out_high) / 2
    return round(out_low + (value - low) / (high - low) * (out_high - out_low), 1)


def ensemble_scatter(data: CalibrationData, options: ReportOptions) -> dict:
    """Return every ensemble of ≤ 3 judges on cost per accepted × catch rate, with the frontier."""
    points = ensembles_up_to(
        data, generation_cost_usd=options.generation_cost_usd, false_reject_ceiling=options.false_reject_ceiling
    )
    shown = [p for p in points if p["cost_per_accepted_usd"] is not None and p["catch_rate"] is not None]
    if not shown:
        return {"points": [], "frontier": "", "ticks_x": [], "ticks_y": []}
    costs = [p["cost_per_accepted_usd"] for p in shown]
    low, high = min(costs), max(costs)
    left, right, top, bottom = MARGIN + 20, CHART_WIDTH - 20, 20, CHART_HEIGHT - MARGIN
    for p in shown:
        p["cx"] = scale(p["cost_per_accepted_usd"], low, high, left, right)
        p["cy"] = scale(p["catch_rate"], 0, 1, bottom, top)
        p["name"] = f"{' + '.join(p['members'])} ({p['rule']})"
    frontier = sorted((p for p in shown if p["pareto"]), key=lambda p: p["cost_per_accepted_usd"])
    tick_values = np.linspace(low, high, 5 if high > low else 1)
    ticks_x = [{"x": scale(v, low, high, left, right), "text": f"${v:.4f}"} for v in tick_values]
    ticks_y = [{"y": scale(v, 0, 1, bottom, top), "text": f"{v:.0%}"} for v in (0, 0.25, 0.5, 0.75, 1)]
    return {
        "points": shown,
        "frontier": " ".join(f"{p['cx']},{p['cy']}" for p in frontier),
        "frontier_points": frontier,
        "ticks_x": ticks_x,
        "ticks_y": ticks_y,
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "bottom": bottom,
        "left": left,
    }


def marginal_values(data: CalibrationData, members: list[int], generation_cost_usd: float) -> list[dict]:
    """Return, for each judge not in the ensemble, extra errors caught per extra dollar ("any" rule).

    Per output: wrong share × Δ catch rate ÷ Δ cost per accepted output.
    """
    base = ensemble_entry(data, members, "any", generation_cost_usd=generation_cost_usd)
    wrong_share = float(data.is_wrong.mean()) if len(data.is_wrong) else 0.0
    rows = []
    for column in range(len(data.judges)):
        if column in members:
            continue
        grown = ensemble_entry(data, [*members, column], "any", generation_cost_usd=generation_cost_usd)
        extra_catch = (grown["catch_rate"] or 0) - (base["catch_rate"] or 0)
        extra_cost = (grown["cost_per_accepted_usd"] or 0) - (base["cost_per_accepted_usd"] or 0)
        rows.append(
            {
                "judge": data.judges[column],
                "extra_catch_rate": extra_catch,
                "extra_false_reject_rate": (grown["false_reject_rate"] or 0) - (base["false_reject_rate"] or 0),
                "extra_cost_per_accepted_usd": extra_cost,
                "catches_per_dollar": wrong_share * extra_catch / extra_cost if extra_cost > 0 else None,
            }
        )
    return sorted(rows, key=lambda row: -(row["catches_per_dollar"] or 0))


def error_class_chart(report: dict) -> dict:
    """Return a grouped bar chart: per error class, one bar per judge with its 95% whiskers."""
    classes = sorted({slug for judge in report["judges"] for slug in judge["catch_rate_by_error_class"]})
    n = max(len(report["judges"]), 1)
    group_width = max(110, 14 * n + 20)
    bar = (group_width - 20) / n
    bottom, top, left = CHART_HEIGHT - MARGIN, 20, MARGIN + 10
    groups = []
    for g, slug in enumerate(classes):
        bars = []
        for j, judge in enumerate(report["judges"]):
            rate = judge["catch_rate_by_error_class"].get(slug)
            interval = judge["catch_rate_by_error_class_ci95"].get(slug)
            if rate is None:
                continue
            x = left + g * group_width + 10 + j * bar
            bars.append(
                {
                    "x": round(x, 1),
                    "width": round(bar - 2, 1),
                    "y": scale(rate, 0, 1, bottom, top),
                    "height": round(scale(0, 0, 1, bottom, top) - scale(rate, 0, 1, bottom, top), 1),
                    "colour": PALETTE[j % len(PALETTE)],
                    "whisker_x": round(x + (bar - 2) / 2, 1),
                    "whisker_low": scale(interval[0], 0, 1, bottom, top),
                    "whisker_high": scale(interval[1], 0, 1, bottom, top),
                    "title": f"{judge['name']} v{judge['version']} on {slug}: {rate:.0%} "
                    f"[{interval[0]:.0%}–{interval[1]:.0%}]",
                }
            )
        groups.append({"slug": slug, "label_x": left + g * group_width + group_width / 2, "bars": bars})
    ticks = [{"y": scale(v, 0, 1, bottom, top), "text": f"{v:.0%}"} for v in (0, 0.25, 0.5, 0.75, 1)]
    return {
        "groups": groups,
        "ticks": ticks,
        "width": left + max(len(classes), 1) * group_width + 10,
        "height": CHART_HEIGHT,
        "bottom": bottom,
        "left": left,
        "legend": [
            {"text": f"{j['name']} v{j['version']}", "colour": PALETTE[i % len(PALETTE)]}
            for i, j in enumerate(report["judges"])
        ],
    }
