"""Reads for judges: run progress and ETA, version comparison, per-version run counts."""

from __future__ import annotations

from django.db.models import Count, Q
from django.shortcuts import get_object_or_404
from django.utils import timezone

from judges.backends.prompt import request_join
from judges.models import CalibrationRun, Decision, Judge, JudgeVersion, PromptPrefix, RunStatus, Verdict
from judges.services import VERSION_FIELDS


def run_progress(run: CalibrationRun) -> dict:
    """Return done/total/errors/spend and an ETA from the rate since the run last (re)started."""
    from judges.runner import run_totals

    totals = run_totals(run.pk)
    total = totals["total"] or run.total_tasks
    done = totals["done"]
    percent = round(100 * done / total, 1) if total else 0.0
    eta_seconds = None
    if run.status == RunStatus.RUNNING and run.resumed_at and done > run.done_at_resume:
        elapsed = (timezone.now() - run.resumed_at).total_seconds()
        rate = (done - run.done_at_resume) / max(elapsed, 0.001)
        eta_seconds = int((total - done) / rate) if rate > 0 else None
    return {
        "done": done,
        "total": total,
        "errors": totals["errors"],
        "spent_usd": totals["spent"],
        "percent": percent,
        "eta_seconds": eta_seconds,
        "active": run.is_active,
    }


def run_version_counts(run: CalibrationRun) -> list[dict]:
    """Count accept / reject / error per judge version of a run."""
    rows = (
        Verdict.objects.filter(run=run)
        .values("judge_version")
        .annotate(
            accepts=Count("id", filter=Q(decision=Decision.ACCEPT)),
            rejects=Count("id", filter=Q(decision=Decision.REJECT)),
            errors=Count("id", filter=Q(decision=Decision.ERROR)),
        )
    )
    by_version = {row["judge_version"]: row for row in rows}
    result = []
    for version in run.judge_versions.select_related("judge").order_by("judge__name"):
        row = by_version.get(version.pk, {"accepts": 0, "rejects": 0, "errors": 0})
        result.append({"version": version, **row})
    return result


def run_recent_errors(run: CalibrationRun, limit: int = 20):
    return (
        Verdict.objects.filter(run=run, decision=Decision.ERROR)
        .select_related("judge_version__judge")
        .order_by("-id")[:limit]
    )


def judge_version_diff(left: JudgeVersion, right: JudgeVersion) -> list[dict]:
    """Return each version field with both values and whether they differ."""
    rows = []
    for name in [*VERSION_FIELDS, "is_simulated"]:
        a, b = getattr(left, name), getattr(right, name)
        rows.append({"field": name, "left": a, "right": b, "changed": a != b})
    return rows


def judge_with_versions(pk: int) -> Judge:
    return get_object_or_404(Judge.objects.prefetch_related("versions"), pk=pk)


def runs_recent(limit: int = 20):
    return CalibrationRun.objects.select_related("gold_set_version__gold_set").prefetch_related("judge_versions")[
        :limit
    ]


def verdict_trace(verdict: Verdict, prefix_body: dict | None = None) -> dict:
    """Return what a reviewer needs to reproduce a verdict (the `export_verdicts` line)."""
    if prefix_body is None and verdict.prompt_prefix_id:
        prefix_body = verdict.prompt_prefix.body
    context = verdict.context or {}
    has_request = bool(prefix_body or verdict.request_tail)
    return {
        "id": verdict.pk,
        "run": verdict.run_id,
        "judge": verdict.judge_version.judge.name,
        "judge_version": verdict.judge_version.number,
        "judge_version_id": verdict.judge_version_id,
        "query_id": verdict.query_id,
        "external_id": verdict.query.external_id,
        "repeat": verdict.repeat,
        "decision": verdict.decision,
        "reason": verdict.reason,
        "error_class": verdict.error_class_guess,
        "request": request_join(prefix_body, verdict.request_tail) if has_request else None,
        "response": verdict.raw_response,
        "usage": {
            "input_tokens": verdict.input_tokens,
            "output_tokens": verdict.output_tokens,
            "cache_creation_input_tokens": verdict.cache_write_tokens,
            "cache_read_input_tokens": verdict.cache_read_tokens,
        },
        "cost_usd": float(verdict.cost_usd),
        "latency_ms": verdict.latency_ms,
        "attempts": context.get("attempts"),
        "simulated": verdict.simulated,
        "endpoint": verdict.endpoint,
        "catalogue_version": verdict.catalogue_version,
        "schema": context.get("schema"),
        "result_preview": context.get("result_preview"),
        "created_at": verdict.created_at.isoformat() if verdict.created_at else None,
    }


def verdict_trace_rows(*, run: CalibrationRun):
    """Yield the trace of every verdict of a run, in id order; each prefix is read once."""
    prefixes: dict[int, dict] = {}
    verdicts = (
        Verdict.objects.filter(run=run)
        .select_related("judge_version__judge", "query")
        .order_by("pk")
        .iterator(chunk_size=2000)
    )
    for verdict in verdicts:
        prefix_id = verdict.prompt_prefix_id
        if prefix_id and prefix_id not in prefixes:
            prefixes[prefix_id] = PromptPrefix.objects.values_list("body", flat=True).get(pk=prefix_id)
        yield verdict_trace(verdict, prefixes.get(prefix_id))
