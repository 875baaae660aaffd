"""Reads for judges: run progress and ETA, version comparison, run counts, which runs a report uses."""

from __future__ import annotations

import difflib
import json

import numpy as np
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404
from django.utils import timezone

from config.keyset import keyset_rows
from judges import metrics
from judges.backends import vendor_backend
from judges.backends.base import instructions_for
from judges.backends.prompt import request_join
from judges.calibration_data import load_calibration, load_calibrations
from judges.chunks import run_totals
from judges.example_candidates import example_value
from judges.models import Backend, CalibrationRun, Decision, Judge, JudgeVersion, PromptPrefix, RunStatus, Verdict
from judges.provenance import Provenance, provenance_counts
from judges.services import VERSION_FIELDS
from labelling.models import GoldSetVersion, Query
from probes.selectors import warehouse_names_allowing_result_egress


def run_progress_get(*, run: CalibrationRun) -> dict:
    """Return done/total/errors/spend and an ETA from the rate since the run last (re)started."""
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


def run_version_counts_get(*, run: CalibrationRun) -> list[dict]:
    """Count accept / reject / error verdicts per judge version of a run, with their provenance."""
    verdicts = Verdict.objects.filter(run=run)
    rows = verdicts.values("judge_version").annotate(
        accepts=Count("id", filter=Q(decision=Decision.ACCEPT)),
        rejects=Count("id", filter=Q(decision=Decision.REJECT)),
        errors=Count("id", filter=Q(decision=Decision.ERROR)),
    )
    by_version = {row["judge_version"]: row for row in rows}
    # Read from the verdicts, recorded at call time: a badge never says more than they do.
    provenance = provenance_counts(verdicts, by=("judge_version",))
    result = []
    for version in run.judge_versions.select_related("judge").order_by("judge__name"):
        row = by_version.get(version.pk, {"accepts": 0, "rejects": 0, "errors": 0})
        result.append({"version": version, **row, "provenance": provenance.get((version.pk,), Provenance())})
    return result


def judges_index_rows() -> list[dict]:
    """Each judge with its latest version and that version's verdict provenance (for the index)."""
    judges = list(Judge.objects.prefetch_related("versions").order_by("name"))
    latest = {judge.pk: next(iter(judge.versions.all()), None) for judge in judges}
    ids = [version.pk for version in latest.values() if version is not None]
    provenance = provenance_counts(Verdict.objects.filter(judge_version_id__in=ids), by=("judge_version",))
    return [
        {
            "judge": judge,
            "version": latest[judge.pk],
            "versions": len(judge.versions.all()),
            "provenance": provenance.get((getattr(latest[judge.pk], "pk", None),), Provenance()),
        }
        for judge in judges
    ]


def versions_with_provenance(versions, *, run=None) -> list:
    """The versions, each with `.provenance` of its verdicts (within `run` when given)."""
    versions = list(versions)
    verdicts = Verdict.objects.filter(judge_version__in=versions)
    if run is not None:
        verdicts = verdicts.filter(run=run)
    counts = provenance_counts(verdicts, by=("judge_version",))
    for version in versions:
        version.provenance = counts.get((version.pk,), Provenance())
    return versions


def run_errors_list(*, run: CalibrationRun, limit: int = 20):
    return (
        Verdict.objects.filter(run=run, decision=Decision.ERROR)
        .select_related("judge_version__judge")
        .order_by("-id")[:limit]
    )


def judge_version_diff_get(*, left: JudgeVersion, right: JudgeVersion) -> list[dict]:
    """Return each version field with both values and whether they differ."""
    rows = []
    for name in [*VERSION_FIELDS, "is_simulated"]:
        a, b = getattr(left, name), getattr(right, name)
        shown = [json.dumps(v, indent=2, sort_keys=True) if isinstance(v, dict | list | bool) else v for v in (a, b)]
        rows.append({"field": name, "left": shown[0], "right": shown[1], "changed": a != b})
    return rows


def judge_get(*, pk: int) -> Judge:
    return get_object_or_404(Judge.objects.prefetch_related("versions"), pk=pk)


def run_list(*, limit: int = 20) -> list[CalibrationRun]:
    """Recent runs, each with `.versions`: its judge versions with the provenance of their verdicts in it."""
    runs = list(
        CalibrationRun.objects.select_related("gold_set_version__gold_set").prefetch_related("judge_versions__judge")[
            :limit
        ]
    )
    counts = provenance_counts(
        Verdict.objects.filter(run__in=[run.pk for run in runs]), by=("run_id", "judge_version_id")
    )
    for run in runs:
        run.versions = list(run.judge_versions.all())
        for version in run.versions:
            version.provenance = counts.get((run.pk, version.pk), Provenance())
    return runs


def judge_runs_list(*, judge: Judge, limit: int = 20):
    """The calibration runs any version of this judge took part in, newest first."""
    return (
        CalibrationRun.objects.filter(judge_versions__judge=judge)
        .distinct()
        .select_related("gold_set_version__gold_set")
        .prefetch_related("judge_versions__judge")
        .order_by("-created_at")[:limit]
    )


def verdict_trace_get(*, verdict: Verdict, prefix_body: dict | None = None) -> dict:
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
        "cost_usd": None if verdict.cost_usd is None else float(verdict.cost_usd),
        "latency_ms": verdict.latency_ms,
        "attempts": context.get("attempts"),
        "simulated": verdict.simulated,
        "endpoint": verdict.endpoint,
        "catalogue_version": verdict.catalogue_version,
        "schema": context.get("schema"),
        "result_preview": context.get("result_preview"),
        "created_at": verdict.created_at.isoformat() if verdict.created_at else None,
    }


def verdict_trace_list(*, run: CalibrationRun):
    """Yield the trace of every verdict of a run, in id order; each prefix is read once."""
    prefixes: dict[int, dict] = {}
    verdicts = Verdict.objects.filter(run=run).select_related("judge_version__judge", "query")
    # Keyset pages by id (config/keyset.py): no OFFSET, no cursor held open for the whole run.
    for verdict in keyset_rows(verdicts, ("pk",), chunk=2000):
        prefix_id = verdict.prompt_prefix_id
        if prefix_id and prefix_id not in prefixes:
            prefixes[prefix_id] = PromptPrefix.objects.values_list("body", flat=True).get(pk=prefix_id)
        yield verdict_trace_get(verdict=verdict, prefix_body=prefixes.get(prefix_id))


# --- the judge page: prompt, versions with metrics, item-by-item comparison -------------------------

LLM_BACKENDS = {Backend.ANTHROPIC, Backend.OPENAI_COMPATIBLE, Backend.SELF_CONSISTENCY, Backend.HYPOTHESIS_PROBE}
EXAMPLE_QUESTION = "How many orders were completed?"
EXAMPLE_SQL = "SELECT COUNT(*) FROM orders WHERE status = 'completed'"


def example_query_get(*, judge_version: JudgeVersion) -> Query:
    """A query to show the prompt with: one this version judged on a warehouse, else any with a catalogue."""
    judged = (
        Query.objects.filter(verdicts__judge_version=judge_version, warehouse__catalogues__isnull=False)
        .select_related("warehouse")
        .order_by("pk")
        .first()
    )
    if judged is not None:
        return judged
    with_catalogue = (
        Query.objects.filter(warehouse__catalogues__isnull=False).select_related("warehouse").order_by("pk").first()
    )
    return with_catalogue or Query(question=EXAMPLE_QUESTION, sql=EXAMPLE_SQL, external_id="example")


def judge_version_prompt_get(*, judge_version: JudgeVersion) -> dict | None:
    """Render the version's full request for an example query (no call is made); None for non-LLM judges."""
    if judge_version.backend not in LLM_BACKENDS:
        return None
    config = judge_version.config or {}
    vendor = (
        config.get("vendor", Backend.ANTHROPIC)
        if judge_version.backend in (Backend.SELF_CONSISTENCY, Backend.HYPOTHESIS_PROBE)
        else judge_version.backend
    )
    backend = vendor_backend(judge_version, vendor, hypotheses=judge_version.backend == Backend.HYPOTHESIS_PROBE)
    query = example_query_get(judge_version=judge_version)
    prompt = backend.prompt_for(query)
    request = backend.request(query, prompt)
    tools = request.get("tools") or []
    return {
        "query": query,
        "vendor": vendor,
        "endpoint": backend.endpoint,
        "instructions": prompt.instructions,
        "schema": prompt.schema,
        "shared_schema": prompt.shared_schema_text,
        "user_text": prompt.user_text,
        "tool_json": json.dumps(tools[0] if tools else request.get("response_format"), indent=2),
        "request_json": json.dumps(request, indent=2),
        # Rows leave only from warehouses whose admin consented (judges/backends/prompt.py).
        "preview_warehouses": warehouse_names_allowing_result_egress()
        if judge_version.include_result_preview
        else None,
    }


def judge_version_metrics_list(*, judge: Judge) -> list[dict]:
    """Each gold-set version the judge ran on, with every version's figures there (its report entry's summary).

    One load for all the gold-set versions (`load_calibrations`): the page costs the same
    however many versions, runs and judges there are.
    """
    gold_versions = list(
        GoldSetVersion.objects.filter(
            calibration_runs__judge_versions__judge=judge, calibration_runs__status="completed"
        )
        .select_related("gold_set")
        .distinct()
        .order_by("gold_set__name", "-number")
    )
    loaded = load_calibrations(gold_set_versions=gold_versions)
    tables = []
    for gold_version in gold_versions:
        data = loaded[gold_version.pk]
        entries = [
            judge_version_summary(data, column) for column, column_judge in enumerate(data.judges)
            if column_judge.slug == judge.name
        ]  # fmt: skip
        if entries:
            tables.append({"gold_set_version": gold_version, "entries": sorted(entries, key=lambda e: -e["version"])})
    return tables


def judge_version_summary(data, column: int) -> dict:
    """Return one judge version's figures on loaded data: the report entry's `metrics.judge_summary`."""
    judge = data.judges[column]
    entry = {"name": judge.name, "version": judge.number, "judge_version_id": judge.id}
    entry.update(
        metrics.judge_summary(
            data.counts,
            column,
            data.is_wrong,
            data.error_class,
            cost_sum=float(data.cost_sum[column]),
            verdicts=int(data.verdicts[column]),
            latencies=data.latency_of(column),
            generation_cost=0.0,
        )
    )
    entry["cost_per_accepted_ci95"] = metrics.cost_per_accepted_interval(
        entry.get("flag_rate_ci95"), entry["cost_per_verdict_usd"]
    )
    return entry


def judge_version_item_diff_get(*, left: JudgeVersion, right: JudgeVersion, gold_set_version) -> dict:
    """Compare two versions item by item on a gold-set version (majority verdict per item).

    Returns the wrong items one catches and the other misses, and the correct items one
    rejects and the other accepts, both ways.
    """
    data = load_calibration(gold_set_version=gold_set_version)
    columns = {judge.id: index for index, judge in enumerate(data.judges)}
    result = {"gold_set_version": gold_set_version, "available": left.pk in columns and right.pk in columns}
    if not result["available"]:
        return result
    judged = data.counts.judged
    a, b = columns[left.pk], columns[right.pk]
    majority = metrics.majority_decisions(np.nan_to_num(data.probs, nan=0.0))
    both = judged[:, a] & judged[:, b]
    rejects_a, rejects_b = (majority[:, a] == 1) & both, (majority[:, b] == 1) & both
    wrong = data.is_wrong

    def items(mask):
        return [
            {
                "query_id": int(data.query_ids[i]),
                "external_id": data.external_ids[i],
                "error_class": data.error_class[i],
            }
            for i in np.flatnonzero(mask)
        ]

    result.update(
        compared=int(both.sum()),
        caught_by_right_only=items(wrong & rejects_b & ~rejects_a),
        caught_by_left_only=items(wrong & rejects_a & ~rejects_b),
        false_reject_right_only=items(~wrong & rejects_b & ~rejects_a),
        false_reject_left_only=items(~wrong & rejects_a & ~rejects_b),
    )
    return result


def judge_version_form_diff_get(*, current: JudgeVersion, proposed: dict) -> dict:
    """What saving `proposed` would change against `current`: fields, and the prompt as a unified diff."""
    fields = []
    for name in VERSION_FIELDS:
        old, new = getattr(current, name), proposed.get(name)
        if name == "config":
            old, new = old or {}, new or {}
        if str(old) != str(new) and not (name == "prompt_template" and (old or "").strip() == (new or "").strip()):
            fields.append({"field": name, "old": old, "new": new})
    old_prompt = instructions_for(current)
    new_prompt = instructions_for(JudgeVersion(prompt_template=proposed.get("prompt_template") or ""))
    diff = list(
        difflib.unified_diff(
            old_prompt.splitlines(), new_prompt.splitlines(), f"v{current.number}", "new version", lineterm="", n=2
        )
    )
    return {"fields": fields, "prompt_diff": diff, "changed": bool(fields)}


def judge_edit_initial(latest: JudgeVersion | None) -> dict:
    """The edit form starts from the version in use, its prompt as it runs (the built-in one written out)."""
    if latest is None:
        return {}
    initial = {f: getattr(latest, f) for f in VERSION_FIELDS}
    if latest.backend in LLM_BACKENDS and not (latest.prompt_template or "").strip():
        initial["prompt_template"] = instructions_for(latest, hypotheses=latest.backend == Backend.HYPOTHESIS_PROBE)
    return initial


def example_values_of(version: JudgeVersion | None) -> list[str]:
    """The version's worked examples as the edit page's checkbox values ("<gold-set version id>:<item id>")."""
    if version is None:
        return []
    examples = version.examples.order_by("position", "pk").values_list("gold_set_version_id", "query__external_id")
    return [example_value(version_id, external_id) for version_id, external_id in examples]


def prompt_as_stored(latest: JudgeVersion | None, proposed: dict) -> dict:
    """A prompt left as the built-in one it was shown as stays the built-in one (stored empty)."""
    if latest is not None and not (latest.prompt_template or "").strip():
        shown = judge_edit_initial(latest).get("prompt_template") or ""
        if (proposed.get("prompt_template") or "").strip() == shown.strip():
            return {**proposed, "prompt_template": ""}
    return proposed
