"""Writes for judges: definitions and immutable versions, live judging, calibration runs."""

from __future__ import annotations

import re
from decimal import Decimal
from itertools import zip_longest

from celery import current_app
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from config.audit_log import acting
from judges import vendor_access
from judges.backends import get_backend, judge_safely
from judges.backends.ladder import rung_problem
from judges.backends.vendors import VENDOR_BACKENDS, version_endpoint
from judges.chunks import chunks_expired_release, lease_duration, run_totals
from judges.models import (
    Backend,
    CalibrationRun,
    ChunkStatus,
    Judge,
    JudgeVersion,
    PromptPrefix,
    RunChunk,
    RunStatus,
    Verdict,
)

CHUNK_SIZE = 500
# Tasks queued per judge version of a run (see run_lanes_enqueue): up to this many worker
# processes can work on one judge version at once.
LANES_PER_JUDGE_VERSION = 4
VERSION_FIELDS = [
    "backend",
    "family",
    "model",
    "prompt_template",
    "temperature",
    "max_tokens",
    "price_input_per_mtok",
    "price_output_per_mtok",
    "price_cache_read_per_mtok",
    "price_cache_write_per_mtok",
    "config",
    "schema_token_budget",
    "include_result_preview",
]
# Anthropic bills a 5-minute cache write at 1.25x the input price and a cache read at 0.1x.
ANTHROPIC_CACHE_WRITE_FACTOR = Decimal("1.25")
ANTHROPIC_CACHE_READ_FACTOR = Decimal("0.1")
# A config is for base URLs, concurrency and the like; a key-looking entry is refused so a
# secret never lands in the database (name an environment variable with api_key_env).
SECRET_KEY_PATTERN = re.compile(r"(api[_-]?key|secret|token|password)$", re.I)
# The tasks, by their registered names: judges/tasks.py imports this module, so this module
# sends to them by name rather than import them.
PLAN_TASK = "judges.plan_calibration_run"
CHUNK_TASK = "judges.execute_run_chunk"


def _config_validated(config) -> dict:
    if config in (None, ""):
        return {}
    if not isinstance(config, dict):
        raise ValidationError({"config": "config must be a JSON object"})
    for key, value in config.items():
        if SECRET_KEY_PATTERN.search(key) and key != "api_key_env":
            raise ValidationError(
                {"config": f"config.{key} looks like a secret; set api_key_env to an environment variable name instead"}
            )
        if isinstance(value, str) and value.startswith(("sk-", "sk_")):
            raise ValidationError(
                {"config": f"config.{key} looks like an API key; keys come only from the environment"}
            )
    return config


def _is_simulated(fields: dict) -> bool:
    """Say whether a version is bound to the local vendor simulator (explicitly, never for want of a key)."""
    endpoint = version_endpoint(fields.get("backend"), fields.get("config"))
    return endpoint is not None and endpoint.simulated


def _fill_default_cache_prices(fields: dict) -> None:
    """Fill an Anthropic version's unset cache prices from its input price (1.25x write, 0.1x read)."""
    if fields.get("backend") != Backend.ANTHROPIC:
        return
    price_in = Decimal(str(fields.get("price_input_per_mtok") or 0))
    if not price_in:
        return
    if not Decimal(str(fields.get("price_cache_write_per_mtok") or 0)):
        fields["price_cache_write_per_mtok"] = (price_in * ANTHROPIC_CACHE_WRITE_FACTOR).quantize(Decimal("0.0001"))
    if not Decimal(str(fields.get("price_cache_read_per_mtok") or 0)):
        fields["price_cache_read_per_mtok"] = (price_in * ANTHROPIC_CACHE_READ_FACTOR).quantize(Decimal("0.0001"))


def prompt_prefixes_store(*, judge_version_id: int, results) -> dict[str, int]:
    """Store the request prefixes of these results once each; return {sha256: prefix id}.

    A prefix is the same for every verdict of a version on one catalogue version, so a
    run stores a handful, however many verdicts it has.
    """
    wanted = {result.prefix_sha256: result for result in results if result.prefix_sha256}
    ids = dict(PromptPrefix.objects.filter(sha256__in=list(wanted)).values_list("sha256", "id"))
    for sha, result in wanted.items():
        if sha not in ids:
            prefix, _ = PromptPrefix.objects.get_or_create(
                sha256=sha,
                defaults={
                    "judge_version_id": judge_version_id,
                    "catalogue_version": result.catalogue_version,
                    # A prompt template or a catalogue comment could carry a key or DSN.
                    "body": vendor_access.redact_secrets(result.request_prefix),
                },
            )
            ids[sha] = prefix.pk
    return ids


@transaction.atomic
def judge_version_create(*, judge: Judge, user=None, **fields) -> JudgeVersion:
    """Freeze a new version of `judge`; versions are never edited, so verdicts keep their meaning."""
    unknown = set(fields) - set(VERSION_FIELDS) - {"is_simulated", "note"}
    if unknown:
        raise ValidationError(f"unknown judge version fields: {', '.join(sorted(unknown))}")
    fields["config"] = _config_validated(fields.get("config"))
    if fields.get("backend") == Backend.LADDER and (problem := rung_problem(fields["config"])):
        raise ValidationError({"config": [problem]})
    latest = judge.latest_version
    vendor_access.judge_config_check(config=fields["config"], previous_config=latest and latest.config, user=user)
    if fields.get("is_simulated") and fields.get("backend") in VENDOR_BACKENDS:
        # Simulated is a binding, not a label: the calls go to the simulator.
        fields["config"] = {**fields["config"], "simulated": True}
    fields["is_simulated"] = _is_simulated(fields)
    _fill_default_cache_prices(fields)
    Judge.objects.select_for_update().filter(pk=judge.pk).first()  # serialise version numbering
    number = (judge.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    version = JudgeVersion(judge=judge, number=number, created_by=user, **fields)
    version.full_clean()
    version.save()
    return version


@transaction.atomic
def judge_create(*, name: str, description: str = "", user=None, **version_fields) -> Judge:
    """Create a judge and its first version."""
    with acting(user):  # the audit log's actor, also outside a request
        judge = Judge(name=name, description=description)
        judge.full_clean()
        judge.save()
        judge_version_create(judge=judge, user=user, **version_fields)
    return judge


@transaction.atomic
def judge_clone(*, judge: Judge, name: str, user=None) -> Judge:
    """Create a new judge whose first version copies `judge`'s latest version."""
    source = judge.latest_version
    fields = {f: getattr(source, f) for f in VERSION_FIELDS}
    fields["is_simulated"] = source.is_simulated
    return judge_create(
        name=name,
        description=f"Cloned from {judge.name} v{source.number}. {judge.description}".strip(),
        user=user,
        **fields,
    )


def judge_live_query(*, judge_version: JudgeVersion, query) -> Verdict:
    """Judge a live query once (run=None) and store the verdict; a vendor fault is an error verdict.

    Judging the same query again with the same version returns the stored verdict.
    """
    existing = Verdict.objects.filter(judge_version=judge_version, query=query, run__isnull=True, repeat=0).first()
    if existing:
        return existing
    backend = get_backend(judge_version)  # a replay backend raises here: it cannot judge
    if judge_version.backend == Backend.REPLAY:
        backend.judge(query)
    result = judge_safely(backend, query)
    prefix_ids = prompt_prefixes_store(judge_version_id=judge_version.pk, results=[result])
    try:
        with transaction.atomic():
            return Verdict.objects.create(
                judge_version=judge_version,
                query=query,
                run=None,
                repeat=0,
                prompt_prefix_id=prefix_ids.get(result.prefix_sha256),
                **result.verdict_fields(),
            )
    except IntegrityError:
        # Another worker judged it meanwhile: the constraint keeps exactly one.
        return Verdict.objects.get(judge_version=judge_version, query=query, run__isnull=True, repeat=0)


@transaction.atomic
def calibration_run_start(
    *, gold_set_version, judge_versions, repeats: int = 3, spend_cap_usd=None, user=None, label: str = ""
) -> CalibrationRun:
    """Create a run and queue its planning on Celery once this transaction commits."""
    judge_versions = list(judge_versions)
    if not judge_versions:
        raise ValidationError({"judge_versions": "choose at least one judge version"})
    replayed = [str(v) for v in judge_versions if v.backend == Backend.REPLAY]
    if replayed:
        raise ValidationError({"judge_versions": f"replay judges cannot be run, only imported: {', '.join(replayed)}"})
    if not 1 <= int(repeats) <= 20:
        raise ValidationError({"repeats": "repeats must be between 1 and 20"})
    if spend_cap_usd is not None and Decimal(str(spend_cap_usd)) <= 0:
        raise ValidationError({"spend_cap_usd": "the spend cap must be positive"})
    if not gold_set_version.items.exists():
        raise ValidationError({"gold_set_version": f"{gold_set_version} has no items"})
    run = CalibrationRun.objects.create(
        label=label,
        gold_set_version=gold_set_version,
        repeats=int(repeats),
        spend_cap_usd=spend_cap_usd,
        created_by=user,
    )
    run.judge_versions.set(judge_versions)
    # Plan here (it streams ids and writes one row per slice) rather than in a task: one
    # broker hop less before the first vendor call.
    calibration_run_plan(run=run)
    transaction.on_commit(lambda: run_lanes_enqueue(run_id=run.pk))
    run.refresh_from_db()
    return run


def run_plan_enqueue(*, run: CalibrationRun) -> None:
    """Queue the run's planning task once this transaction commits."""
    transaction.on_commit(lambda: current_app.send_task(PLAN_TASK, args=[run.pk]))


def _item_slices(gold_set_version, size: int | None = None):
    """Yield (first_query_id, last_query_id, count) slices of the version's items, streaming ids."""
    size = size or CHUNK_SIZE
    ids = gold_set_version.items.order_by("query_id").values_list("query_id", flat=True).iterator(chunk_size=5000)
    first = last = None
    count = 0
    for query_id in ids:
        if first is None:
            first = query_id
        last = query_id
        count += 1
        if count == size:
            yield first, last, count
            first, count = None, 0
    if count:
        yield first, last, count


@transaction.atomic
def calibration_run_plan(*, run: CalibrationRun) -> list[int]:
    """Split the run into chunks (once) and mark it running; return the chunk ids still to do."""
    run = CalibrationRun.objects.select_for_update().get(pk=run.pk)
    if run.status in (RunStatus.CANCELLED, RunStatus.STOPPED_BUDGET, RunStatus.COMPLETED, RunStatus.FAILED):
        return []
    if not run.chunks.exists():
        versions = list(run.judge_versions.order_by("pk"))
        batch, total = [], 0
        for first, last, count in _item_slices(run.gold_set_version):
            for repeat in range(run.repeats):
                for version in versions:
                    batch.append(
                        RunChunk(
                            run=run,
                            judge_version=version,
                            repeat=repeat,
                            first_query_id=first,
                            last_query_id=last,
                            item_count=count,
                        )
                    )
                    total += count
            if len(batch) >= 1000:
                RunChunk.objects.bulk_create(batch, ignore_conflicts=True)
                batch = []
        RunChunk.objects.bulk_create(batch, ignore_conflicts=True)
        run.total_tasks = total
    now = timezone.now()
    if run.status == RunStatus.PENDING:
        run.status = RunStatus.RUNNING
        run.started_at = run.started_at or now
        run.resumed_at = now
    run.save()
    return list(run.chunks.exclude(status=ChunkStatus.DONE).values_list("pk", flat=True))


@transaction.atomic
def calibration_run_cancel(*, run: CalibrationRun) -> CalibrationRun:
    """Stop a pending or running run; workers finish their in-flight calls and stop."""
    updated = CalibrationRun.objects.filter(pk=run.pk, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).update(
        status=RunStatus.CANCELLED, stop_reason="cancelled", finished_at=timezone.now()
    )
    if not updated:
        raise ValidationError(
            f"{run} is {run.get_status_display().lower()}; only a pending or running run can be cancelled"
        )
    run.refresh_from_db()
    return run


@transaction.atomic
def calibration_run_resume(*, run: CalibrationRun, spend_cap_usd=None) -> CalibrationRun:
    """Restart a cancelled, budget-stopped or interrupted run; only missing verdicts are made.

    Chunks whose lease expired (their worker died) are handed back; a chunk whose worker
    still holds its lease is left to it: that worker sees the run running again at its
    next flush and goes on, so no item is paid for twice. A raised spend cap may be given.
    """
    run = CalibrationRun.objects.select_for_update().get(pk=run.pk)
    if run.status == RunStatus.COMPLETED:
        raise ValidationError(f"{run} is already completed")
    if spend_cap_usd is not None:
        run.spend_cap_usd = Decimal(str(spend_cap_usd))
    if run.status == RunStatus.STOPPED_BUDGET and run.spend_cap_usd is not None and run.spent_usd >= run.spend_cap_usd:
        raise ValidationError(
            {"spend_cap_usd": f"the run has spent ${run.spent_usd}; raise the cap above that to resume"}
        )
    totals = run_totals(run.pk)
    run.status = RunStatus.RUNNING if run.chunks.exists() else RunStatus.PENDING
    run.stop_reason = ""
    run.finished_at = None
    run.resumed_at = timezone.now()
    run.done_at_resume = totals["done"]
    run.save()
    chunks_expired_release(run_id=run.pk)
    run_plan_enqueue(run=run)
    return run


def run_lanes_enqueue(*, run_id: int) -> int:
    """Queue a few lanes per judge version of the run; return how many tasks were queued.

    A lane is a task that works chunk after chunk of one judge version and hands itself on
    (runner.run_chunk_execute's `hand_on`), so a run of thousands of chunks keeps only a
    few tasks in the broker rather than one per chunk, most of which would find their
    chunk already taken. Several lanes per judge version let several worker processes
    share it; lanes of different versions alternate in the queue, so each judge advances.
    """
    run = CalibrationRun.objects.get(pk=run_id)
    lanes = [
        list(
            run.chunks.filter(judge_version=version, status=ChunkStatus.PENDING)
            .order_by("pk")
            .values_list("pk", flat=True)[:LANES_PER_JUDGE_VERSION]
        )
        for version in run.judge_versions.order_by("pk")
    ]
    chunk_ids = [chunk_id for wave in zip_longest(*lanes) for chunk_id in wave if chunk_id is not None]
    run_chunks_enqueue(chunk_ids=chunk_ids)
    return len(chunk_ids)


def run_chunks_enqueue(*, chunk_ids) -> None:
    """Send one chunk task per id, now (callers in a transaction send on commit)."""
    for chunk_id in chunk_ids:
        current_app.send_task(CHUNK_TASK, args=[chunk_id])


def run_stale_chunks_requeue() -> int:
    """Queue again what crashed workers left; return how many tasks were queued.

    A chunk whose lease expired is queued again; a running run none of whose chunks moved
    for a lease (its lanes were lost, e.g. the broker refused a lane's hand-on) gets new
    lanes, and its pending chunks are marked as touched so the next check waits a lease.
    """
    now = timezone.now()
    stale = list(
        RunChunk.objects.filter(
            status=ChunkStatus.RUNNING, lease_until__lt=now, run__status=RunStatus.RUNNING
        ).values_list("pk", flat=True)
    )
    run_chunks_enqueue(chunk_ids=stale)
    queued = len(stale)
    stalled = (
        CalibrationRun.objects.filter(status=RunStatus.RUNNING, chunks__status=ChunkStatus.PENDING)
        .exclude(chunks__updated_at__gte=now - lease_duration())
        .exclude(chunks__status=ChunkStatus.RUNNING)
        .values_list("pk", flat=True)
        .distinct()
    )
    for run_id in list(stalled):
        RunChunk.objects.filter(run_id=run_id, status=ChunkStatus.PENDING).update(updated_at=now)
        queued += run_lanes_enqueue(run_id=run_id)
    return queued
