"""The loop lab: what each checker does to a generate-check-retry-escalate loop, side by side.

Thin: the form validates what was entered, `loops.selectors.loop_report_build` computes
(with `loops.loop_model`), the template lays the checkers out in columns.
"""

from __future__ import annotations

from django import forms
from django.shortcuts import render

from config.roles import VIEW_JUDGES, VIEW_MONITORING, permission_required
from judges.calibration_data import load_judge_columns
from judges.models import CalibrationRun, RunStatus, Verdict
from labelling.models import GoldSetVersion
from loops.loop_model import FIGURES, SEED_000_ESCALATION_ACCURACY, SEED_000_RETRY_SUCCESS
from loops.selectors import MAX_CHECKERS, EnteredInputs, live_replay_summary, loop_report_build

FIGURE_LABELS = {
    "calls_per_question": ("Generator calls per question", "{:.3f}"),
    "escalated_share": ("Share escalated", "{:.1%}"),
    "cost_per_accepted_usd": ("Cost per accepted answer ($)", "{:.4f}"),
    "wrong_shipped_per_1000": ("Wrong answers shipped per 1,000", "{:.1f}"),
    "correct_rejected_per_1000": ("Correct drafts rejected per 1,000", "{:.1f}"),
    "latency_ms_p50": ("Latency p50 (ms)", "{:,.0f}"),
    "latency_ms_p95": ("Latency p95 (ms)", "{:,.0f}"),
    "latency_ms_p99": ("Latency p99 (ms)", "{:,.0f}"),
}


class LoopLabForm(forms.Form):
    version = forms.ModelChoiceField(queryset=GoldSetVersion.objects.none(), label="Gold-set version")
    checker = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple, label="Checkers")
    ensemble = forms.CharField(required=False, label="Ensemble", help_text='e.g. "a+b" or "a+b+c@majority"')
    max_attempts = forms.IntegerField(min_value=1, max_value=20, initial=3)
    retry_success = forms.CharField(initial=",".join(str(v) for v in SEED_000_RETRY_SUCCESS), label="Retry success")
    # Empty until entered: then the recorded attempts' figures, or the figures that need them say so.
    generation_cost = forms.FloatField(min_value=0, required=False, label="Generator $/call")
    generation_latency_ms = forms.FloatField(min_value=0, required=False, label="Generator ms")
    escalation_cost = forms.FloatField(min_value=0, required=False, label="Escalation $/call")
    escalation_accuracy = forms.FloatField(min_value=0, max_value=1, initial=SEED_000_ESCALATION_ACCURACY)
    escalation_latency_ms = forms.FloatField(min_value=0, initial=0.0, label="Escalation ms")

    def __init__(self, *args, versions, judge_labels, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["version"].queryset = versions
        self.fields["checker"].choices = [(label, label) for label in judge_labels]

    def clean_retry_success(self):
        try:
            values = tuple(float(part) for part in self.cleaned_data["retry_success"].split(",") if part.strip())
        except ValueError:
            raise forms.ValidationError("Comma-separated shares, such as 0.71,0.40.") from None
        if not values or not all(0 <= v <= 1 for v in values):
            raise forms.ValidationError("Each share lies between 0 and 1.")
        return values

    def clean(self):
        data = super().clean()
        specs = list(data.get("checker") or []) + ([data["ensemble"].strip()] if data.get("ensemble") else [])
        if len(specs) > MAX_CHECKERS:
            raise forms.ValidationError(f"Pick at most {MAX_CHECKERS} checkers.")
        data["specs"] = specs
        return data

    def entered(self) -> EnteredInputs:
        data = self.cleaned_data
        return EnteredInputs(
            max_attempts=data["max_attempts"],
            retry_success=data["retry_success"],
            generation_cost_usd=data["generation_cost"] or 0.0,
            generation_latency_ms=data["generation_latency_ms"] or 0.0,
            escalation_cost_usd=data.get("escalation_cost"),
            escalation_accuracy=data["escalation_accuracy"],
            escalation_latency_ms=data["escalation_latency_ms"],
        )


def default_version(versions):
    """The version of the latest completed run, else the latest version with any run."""
    run = CalibrationRun.objects.filter(status=RunStatus.COMPLETED).order_by("-created_at").first()
    return run.gold_set_version if run else versions.order_by("-pk").first()


def judge_labels_on(version) -> list[str]:
    """Return "name:N" of every judge version with verdicts on this gold-set version."""
    if version is None:
        return []
    ids = Verdict.objects.filter(run__gold_set_version=version).values_list("judge_version_id", flat=True).distinct()
    return [f"{column.name}:{column.number}" for column in load_judge_columns(ids)]


# The figures that need the generator's cost or latency, and what to enter for them.
NEEDS_GENERATOR = {
    "cost_per_accepted_usd": ("generation_cost", "enter Generator $/call"),
    "latency_ms_p50": ("generation_latency_ms", "enter Generator ms"),
    "latency_ms_p95": ("generation_latency_ms", "enter Generator ms"),
    "latency_ms_p99": ("generation_latency_ms", "enter Generator ms"),
}


def unknown_figures(report: dict, cleaned: dict) -> dict[str, str]:
    """{figure: what to enter} for figures resting on a generator input neither entered nor recorded."""
    inputs = report["inputs"]
    known = {
        "generation_cost": cleaned.get("generation_cost") is not None or inputs["generation_cost_usd"],
        "generation_latency_ms": cleaned.get("generation_latency_ms") is not None
        or inputs["generation_latency_ms_p50"],
    }
    return {key: hint for key, (field, hint) in NEEDS_GENERATOR.items() if not known[field]}


def figure_rows(report: dict, unknown: dict | None = None) -> list[dict]:
    """Lay the figures out as rows with one formatted cell per checker ("–" and a hint where unknown)."""
    rows = []
    unknown = unknown or {}
    for key in FIGURES:
        label, template = FIGURE_LABELS[key]
        cells = []
        for checker in report["checkers"]:
            entry = checker[key]
            if key in unknown:
                cells.append({"value": "–", "ci": None})
                continue
            value = "–" if entry["value"] is None else template.format(entry["value"])
            ci = entry["ci95"]
            cells.append({"value": value, "ci": None if not ci else [template.format(ci[0]), template.format(ci[1])]})
        rows.append({"key": key, "label": label, "cells": cells, "hint": unknown.get(key, "")})
    return rows


@permission_required(VIEW_JUDGES)
def loop_lab(request):
    """Show the loop figures of up to four checkers and "no checker" on a gold-set version."""
    versions = GoldSetVersion.objects.select_related("gold_set").filter(calibration_runs__isnull=False).distinct()
    wanted = request.GET.get("version", "")
    chosen = (versions.filter(pk=wanted).first() if wanted.isdigit() else None) or default_version(versions)
    params = request.GET.copy()
    if chosen is not None:
        params.setdefault("version", str(chosen.pk))
    for name, field in LoopLabForm.base_fields.items():
        if field.initial is not None and name not in params:
            params[name] = str(field.initial)
    labels = judge_labels_on(chosen)
    if "max_attempts" not in request.GET and "checker" not in params:
        # Opened, not submitted: compare the judges measured on this version, not "no checker" alone.
        params.setlist("checker", labels[: MAX_CHECKERS - 1])
    form = LoopLabForm(params, versions=versions, judge_labels=labels)
    context = {"form": form, "version": chosen}
    if chosen is not None and form.is_valid():
        try:
            report = loop_report_build(
                gold_set_version=form.cleaned_data["version"],
                checker_specs=form.cleaned_data["specs"],
                entered=form.entered(),
            )
        except ValueError as error:
            context["error"] = str(error)
        else:
            context.update(report=report, rows=figure_rows(report, unknown_figures(report, form.cleaned_data)))
    return render(request, "loops/loop_lab.html", context)


@permission_required(VIEW_MONITORING)
def replay_card(request):
    """The triage dashboard's card: the last week's recorded attempts replayed (empty without any).

    The dashboard loads it by URL (`templates/loops/_replay_card_slot.html`), so triage imports
    nothing of the loop lab.
    """
    return render(request, "loops/_replay_card.html", {"loop_replay": live_replay_summary(days=7)})
