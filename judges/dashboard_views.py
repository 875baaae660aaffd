"""The comparison dashboard: judges, miss-set overlap, ensembles, error classes, items.

Every number comes from judges.report (which computes with judges.metrics and
judges.ensembles); chart geometry
is judges.charts. This module only reads the request (gold-set version, run selection,
options) and renders. Charts need no JavaScript; static/js/dashboard.js adds table sorting.
"""

from __future__ import annotations

import numpy as np
from django.db.models import Q
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from config.roles import VIEW_JUDGES, permission_required
from judges.calibration_data import CalibrationData
from judges.charts import PALETTE, ensemble_scatter, error_class_chart, heatmap, upset_chart
from judges.dashboard_classes import category_rows, guess_sections, slice_view
from judges.dashboard_ladder import budget_rows, ladder_rows
from judges.dashboard_request import (
    SELECTION_PARAMS,
    ReportOptions,
    SelectionError,
    data_for,
    load_for,
    selection_query,
)
from judges.dashboard_trends import confusion_cell_items, confusion_tables, judge_trends_get
from judges.ensembles import ENSEMBLE_RULES, miss_patterns, missed_by_all, missed_exactly, threshold_for
from judges.headline import dashboard_headline
from judges.models import CalibrationRun, JudgeVersion, RunStatus, Verdict
from judges.report import ensemble_entry, ensembles_up_to, marginal_values
from judges.trend_chart import TREND_METRICS, trend_chart
from labelling.models import GoldSetVersion, Query
from labelling.split_models import GoldSetSplit


def selection_refused(request, version_id: int, error: SelectionError):
    """Render the page's controls with the reason the run selection was refused (400)."""
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=version_id)
    context = {
        "version": version,
        "versions": versions_with_runs(version),
        "selection_error": str(error),
        "options": ReportOptions(),
        "raw": {name: request.GET.get(name, "") for name in (*SELECTION_PARAMS, "split")},
    }
    return render(request, "judges/dashboard.html", context, status=400)


def versions_with_runs(current: GoldSetVersion | None = None):
    """The selector's versions: those with runs, plus the one shown (so the selector matches the title)."""
    with_runs = Q(calibration_runs__isnull=False) | Q(pk=current.pk if current else None)
    return GoldSetVersion.objects.select_related("gold_set").filter(with_runs).distinct()


def newer_version(version: GoldSetVersion) -> GoldSetVersion | None:
    """The newest published version of the same gold set after this one, if any."""
    return (
        GoldSetVersion.objects.filter(gold_set=version.gold_set, number__gt=version.number, is_frozen=True)
        .select_related("gold_set")
        .order_by("-number")
        .first()
    )


@permission_required(VIEW_JUDGES)
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


@permission_required(VIEW_JUDGES)
def dashboard(request, version_id: int):
    """Show judges, overlap, ensembles and error classes for one gold-set version and run selection."""
    try:
        data, report, options = load_for(version_id, request)
    except SelectionError as error:
        return selection_refused(request, version_id, error)
    # The page places the points on cost × catch and shows no point's latency (the chosen
    # ensemble's partial and the downloads do): its percentiles are left uncomputed.
    points = ensembles_up_to(
        data,
        generation_cost_usd=options.generation_cost_usd,
        false_reject_ceiling=options.false_reject_ceiling,
        latency=False,
    )
    trends = judge_trends_get(data=data)
    rows = judge_rows(data, report)
    simulated = {row["judge"].label for row in rows if row["entry"]["simulation"] != "real"}
    context = {
        "version": data.gold_set_version,
        "versions": versions_with_runs(data.gold_set_version),
        "newer_version": newer_version(data.gold_set_version),
        "version_runs": CalibrationRun.objects.filter(gold_set_version=data.gold_set_version).order_by("pk"),
        "report": report,
        "options": options,
        "raw": {name: request.GET.get(name, "") for name in (*SELECTION_PARAMS, "split")},
        "selection_query": selection_query(request),
        "has_split": GoldSetSplit.objects.filter(version=data.gold_set_version).exists(),
        "judges": rows,
        "heatmaps": [
            heatmap(data.judges, report["pairs"], "both_missed"),
            heatmap(data.judges, report["pairs"], "miss_jaccard"),
        ],
        "upset": upset_chart(data.judges, miss_patterns(data.draws, data.is_wrong)),
        "scatter": ensemble_scatter(points),
        "headline": dashboard_headline(points, options.false_reject_ceiling, simulated=simulated),
        "class_chart": error_class_chart(report),
        "rules": ENSEMBLE_RULES,
        "ladder": ladder_rows(report=report),
        "budget": budget_with_plans(budget_rows(data=data), report),
        "trends": trends,
        "trend_charts": [trend_chart(trends, metric=metric) for metric in TREND_METRICS],
        "confusion": confusion_tables(data=data),
        "class_categories": category_rows(report),
        "class_guesses": guess_sections(data, report),
        "slice": slice_view(data, report, request),
    }
    return render(request, "judges/dashboard.html", context)


@permission_required(VIEW_JUDGES)
def dashboard_report_json(request, version_id: int):
    """Download the same report dict as `judge_report --format json` (same run selection)."""
    try:
        _, report, _ = load_for(version_id, request)
    except SelectionError as error:
        return JsonResponse({"error": str(error)}, status=400)
    response = JsonResponse(report, json_dumps_params={"indent": 2})
    filename = f"{report['gold_set']}-v{report['version']}-judge-report.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@permission_required(VIEW_JUDGES)
def dashboard_ensemble(request, version_id: int):
    """Return the explorer's result for the chosen judges, rule and k, and marginal values."""
    try:
        data, options = data_for(version_id, request)
    except SelectionError as error:
        return render(request, "judges/dashboard.html#ensemble-result", {"error": str(error)}, status=400)
    members = chosen_columns(data, request.GET.getlist("judge"))
    rule = request.GET.get("rule", "any")
    context = {"version": data.gold_set_version, "members": members, "rule": rule}
    try:
        if rule in ENSEMBLE_RULES and not members:
            raise ValueError("Pick at least one judge.")
        k = ensemble_k(rule, request.GET.get("k"), len(members))
        cost = options.generation_cost_usd
        context["result"] = ensemble_entry(data, members, rule, generation_cost_usd=cost, k=k)
        context["common_items"] = int(data.common_items.sum())
        context["marginal"] = marginal_values(data, members, options.generation_cost_usd)
    except ValueError as exc:
        context["error"] = str(exc)
    return render(request, "judges/dashboard.html#ensemble-result", context)


def ensemble_k(rule: str, raw: str | None, n_members: int) -> int | None:
    """Return the k the user typed for k_of_n (None for other rules); refuse it when unusable."""
    if rule not in ENSEMBLE_RULES:
        raise ValueError(f"Unknown rule {rule!r}; use one of {', '.join(ENSEMBLE_RULES)}.")
    if rule != "k_of_n":
        return None
    try:
        k = int(raw)
    except (TypeError, ValueError):
        raise ValueError(f"k must be a whole number between 1 and {n_members}; got {raw!r}.") from None
    threshold_for(rule, n_members, k)
    return k


@permission_required(VIEW_JUDGES)
def dashboard_missed(request, version_id: int):
    """List wrong items by their probability of being missed (a heatmap cell or an UpSet bar).

    Without `exact`: the probability every named judge misses the item (a heatmap cell);
    with `exact=1`: the probability exactly the named judges miss it (an UpSet bar). The
    probabilities are the same expected counts the chart shows and sum to its number.
    """
    try:
        data, _ = data_for(version_id, request)
    except SelectionError as error:
        return render(request, "judges/dashboard.html#missed-items", {"error": str(error)}, status=400)
    columns = chosen_columns(data, request.GET.getlist("judge"))
    exact = request.GET.get("exact") == "1"
    if exact:
        pattern = np.zeros(len(data.judges), dtype=bool)
        pattern[columns] = True
        rows, probability = missed_exactly(data.draws, data.is_wrong, pattern)
    elif columns:
        rows, probability = missed_by_all(data.draws, data.is_wrong, columns)
    else:
        rows, probability = np.array([], dtype=int), np.array([])
    items = [
        {
            "query_id": int(data.query_ids[row]),
            "external_id": data.external_ids[row],
            "error_class": data.error_class[row],
            "missed": float(p),
            "probs": [none_if_nan(data.probs[row, column]) for column in columns],
        }
        for row, p in zip(rows.tolist(), probability.tolist(), strict=True)
    ]
    context = {
        "version": data.gold_set_version,
        "judges": [data.judges[c] for c in columns],
        "items": items,
        "expected_total": float(probability.sum()),
        "exact": exact,
    }
    return render(request, "judges/dashboard.html#missed-items", context)


@permission_required(VIEW_JUDGES)
def dashboard_cell(request, version_id: int):
    """List the items of one confusion-matrix cell: a judge's majority decision × the gold label."""
    try:
        data, _ = data_for(version_id, request)
        judge_version_id = int(request.GET.get("judge", ""))
        cell = confusion_cell_items(
            data=data,
            judge_version_id=judge_version_id,
            gold=request.GET.get("gold"),
            decision=request.GET.get("decision"),
        )
    except ValueError as error:
        # SelectionError is a ValueError too: a refused selection and a bad cell are both a 400.
        context = {"error": str(error) or "Pick a judge, a gold row and a decision."}
        return render(request, _cell_template(request), context, status=400)
    return render(request, _cell_template(request), {"version": data.gold_set_version, **cell})


def _cell_template(request) -> str:
    """The cell's list alone for htmx; a whole page for a link opened in a tab or without JS."""
    return "judges/dashboard_trends.html#cell-items" if request.htmx else "judges/dashboard_cell_page.html"


@permission_required(VIEW_JUDGES)
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


def budget_with_plans(budget: dict, report: dict) -> dict:
    """Put each judge's sample-size plan (its report entry's `planner`) beside its interval budget row."""
    for row, entry in zip(budget["rows"], report["judges"], strict=True):
        row["planner"] = entry["planner"]
    return budget


def judge_rows(data: CalibrationData, report: dict) -> list[dict]:
    """Pair each judge entry with its judge version's description, colour and judge page."""
    judge_of_version = dict(
        JudgeVersion.objects.filter(pk__in=[judge.id for judge in data.judges]).values_list("pk", "judge_id")
    )
    return [
        {
            "entry": entry,
            "judge": judge,
            "judge_pk": judge_of_version.get(judge.id),
            "ref": f"{judge.name}:{judge.number}",
            "colour": PALETTE[i % len(PALETTE)],
        }
        for i, (entry, judge) in enumerate(zip(report["judges"], data.judges, strict=True))
    ]
