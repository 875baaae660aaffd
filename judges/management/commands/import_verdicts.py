"""Import replayed verdicts from JSONL onto a gold set: all lines or none."""

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_slug
from django.db import transaction

from judges.models import Backend, CalibrationRun, Decision, Judge, JudgeVersion, RunStatus, Verdict
from labelling.models import GoldSet, GoldSetVersionItem

# A line without a run label goes into this run, so the report (which reads runs) sees it.
DEFAULT_RUN_LABEL = "import"
INTEGER_FIELDS = ("repeat", "input_tokens", "output_tokens")


class BadLine(Exception):
    """A line that cannot be imported; the message names the line and the field."""


@dataclass(frozen=True)
class VerdictLine:
    number: int
    query_id: int
    judge: str
    run: str
    repeat: int
    decision: str
    reason: str
    cost_usd: Decimal
    latency_ms: float
    input_tokens: int
    output_tokens: int


def parse_line(number: int, text: str, query_ids: dict[str, int]) -> VerdictLine:
    """Validate one JSONL line against the gold set's latest version; raise BadLine."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadLine(f"line {number}: not valid JSON ({exc.msg})") from exc
    if not isinstance(record, dict):
        raise BadLine(f"line {number}: expected a JSON object")
    for required in ("query_id", "judge", "decision"):
        if required not in record:
            raise BadLine(f"line {number}: missing field {required!r}")
    external_id = str(record["query_id"])
    if external_id not in query_ids:
        raise BadLine(f"line {number}: query_id {external_id!r} is not an item of the gold set's latest version")
    judge = record["judge"]
    try:
        validate_slug(judge)
    except ValidationError as exc:
        raise BadLine(f"line {number}: judge {judge!r} is not a valid name (letters, digits, - and _)") from exc
    decision = record["decision"]
    if decision not in Decision.values:
        raise BadLine(f"line {number}: decision {decision!r} is not one of {', '.join(Decision.values)}")
    run = record.get("run")
    if run is not None and (not isinstance(run, str) or not run.strip() or len(run) > 100):
        raise BadLine(f"line {number}: run must be a label of 1-100 characters or null")
    values = {}
    for name in INTEGER_FIELDS:
        value = record.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BadLine(f"line {number}: {name} must be a non-negative integer, got {value!r}")
        values[name] = value
    latency = record.get("latency_ms", 0)
    if isinstance(latency, bool) or not isinstance(latency, int | float) or latency < 0:
        raise BadLine(f"line {number}: latency_ms must be a non-negative number, got {latency!r}")
    try:
        cost = Decimal(str(record.get("cost_usd", 0)))
    except InvalidOperation as exc:
        raise BadLine(f"line {number}: cost_usd must be a number") from exc
    if not cost.is_finite() or cost < 0 or cost >= 10_000:
        raise BadLine(f"line {number}: cost_usd must be between 0 and 10000, got {record.get('cost_usd')!r}")
    reason = record.get("reason", "")
    if not isinstance(reason, str):
        raise BadLine(f"line {number}: reason must be a string")
    return VerdictLine(
        number=number,
        query_id=query_ids[external_id],
        judge=judge,
        run=(run or DEFAULT_RUN_LABEL).strip(),
        decision=decision,
        reason=reason,
        cost_usd=cost.quantize(Decimal("0.00000001")),
        latency_ms=float(latency),
        **values,
    )


def parse_file(path: Path, query_ids: dict[str, int]) -> list[VerdictLine]:
    """Parse every non-blank line, refusing duplicates of the same (judge, query, run, repeat)."""
    lines, seen = [], {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            line = parse_line(number, text, query_ids)
            key = (line.judge, line.query_id, line.run, line.repeat)
            if key in seen:
                raise BadLine(f"line {number}: same judge, query, run and repeat as line {seen[key]}")
            seen[key] = number
            lines.append(line)
    return lines


def judge_versions_for(names: set[str]) -> dict[str, JudgeVersion]:
    """Return each judge's latest version, creating unknown judges as `replay` version 1."""
    versions = {}
    for name in sorted(names):
        judge, _ = Judge.objects.get_or_create(name=name, defaults={"description": "Created by import_verdicts."})
        version = judge.latest_version or JudgeVersion.objects.create(judge=judge, number=1, backend=Backend.REPLAY)
        versions[name] = version
    return versions


def refuse_existing(lines: list[VerdictLine], versions: dict, runs: dict) -> None:
    """Raise BadLine for the first line whose verdict is already stored."""
    existing = set(
        Verdict.objects.filter(run__in=[run.pk for run in runs.values() if run.pk]).values_list(
            "judge_version_id", "query_id", "run_id", "repeat"
        )
    )
    for line in lines:
        key = (versions[line.judge].pk, line.query_id, runs[line.run].pk, line.repeat)
        if key in existing:
            raise BadLine(f"line {line.number}: this verdict (judge, query, run {line.run!r}, repeat) already exists")


@transaction.atomic
def verdicts_import(*, path: Path, gold_set_name: str) -> dict:
    """Import a JSONL file of verdicts onto a gold set's latest version, atomically."""
    gold_set = GoldSet.objects.filter(name=gold_set_name).first()
    if gold_set is None:
        raise CommandError(f"no gold set named {gold_set_name!r}")
    version = gold_set.versions.order_by("-number").first()
    if version is None:
        raise CommandError(f"gold set {gold_set_name!r} has no published version")
    query_ids = dict(GoldSetVersionItem.objects.filter(version=version).values_list("query__external_id", "query_id"))
    lines = parse_file(path, query_ids)
    versions = judge_versions_for({line.judge for line in lines})
    runs = {}
    for label in sorted({line.run for line in lines}):
        run, _ = CalibrationRun.objects.get_or_create(
            gold_set_version=version, label=label, defaults={"status": RunStatus.COMPLETED, "repeats": 1}
        )
        runs[label] = run
    refuse_existing(lines, versions, runs)
    Verdict.objects.bulk_create(
        [
            Verdict(
                judge_version=versions[line.judge],
                query_id=line.query_id,
                run=runs[line.run],
                repeat=line.repeat,
                decision=line.decision,
                reason=line.reason,
                cost_usd=line.cost_usd,
                latency_ms=line.latency_ms,
                input_tokens=line.input_tokens,
                output_tokens=line.output_tokens,
            )
            for line in lines
        ],
        batch_size=2000,
    )
    for label, run in runs.items():
        in_run = [line for line in lines if line.run == label]
        run.judge_versions.add(*{versions[line.judge] for line in in_run})
        run.repeats = max(run.repeats, max(line.repeat for line in in_run) + 1)
        run.total_tasks = Verdict.objects.filter(run=run).count()
        run.save(update_fields=["repeats", "total_tasks"])
    return {"verdicts": len(lines), "judges": sorted(versions), "runs": sorted(runs), "version": version.number}


class Command(BaseCommand):
    help = "Import verdicts (JSONL, one per line) onto a gold set's latest version; a bad line imports nothing."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--gold-set", required=True, help="Name of the gold set the query ids belong to.")

    def handle(self, *args, path, gold_set, **options):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            summary = verdicts_import(path=path, gold_set_name=gold_set)
        except BadLine as exc:
            raise CommandError(f"{path}: {exc}; nothing was imported") from exc
        self.stdout.write(
            f"imported {summary['verdicts']} verdicts from {len(summary['judges'])} judges "
            f"into runs {', '.join(summary['runs'])} on {gold_set} v{summary['version']}"
        )
