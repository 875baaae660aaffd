"""Import verdicts of judges run elsewhere onto a gold-set version: all lines or none.

`judges/verdict_formats.py` reads the file into records; here each record is validated
into a `VerdictLine`, and the verdicts are stored in one transaction, each in a `replay`
version of its judge (created on first import, one per source format; a name Docket runs
as a vendor or check judge gets a judge "<name> (imported)" instead), marked imported
with its format, not simulated, endpoint `imported`. Missing cost or latency is stored
as null (not measured), never as 0. Verdicts for items not in the chosen version are
counted and listed, not imported (`strict` makes them fatal).
"""

import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.db import transaction
from django.db.models import Max

from judges.models import Backend, CalibrationRun, Decision, Judge, JudgeVersion, RunStatus, Verdict
from judges.provenance import IMPORTED_ENDPOINT
from judges.verdict_formats import (
    DOCKET_FIELDS,
    UNREADABLE,
    ImportPlan,
    as_text,
    bad_line,
    detect_format,
    read_records,
)
from judges.verdict_sums import record_verdict_sums
from labelling.goldset_records import check_storable_text
from labelling.models import GoldSet, GoldSetVersionItem

# A line without a run label goes into this run, so the report (which reads runs) sees it.
DEFAULT_RUN_LABEL = "import"
INTEGER_FIELDS = ("repeat", "input_tokens", "output_tokens")
GUESS_MAX_LENGTH = 100  # Verdict.error_class_guess


class GoldSetVersionMissing(Exception):
    """The gold set, or the version asked for, does not exist."""


@dataclass(frozen=True)
class VerdictLine:
    number: int
    external_id: str
    judge: str
    run: str
    repeat: int
    decision: str
    reason: str
    cost_usd: Decimal | None
    latency_ms: float | None
    input_tokens: int
    output_tokens: int
    error_class_guess: str = ""
    unreadable: str | None = None  # the decision text that could not be read (an error verdict)


def judge_slug(name: str) -> str:
    """Return the slug of a free-text judge name: "openai/gpt-4o" -> "openai-gpt-4o"."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", name.strip().lower()).strip("-")[:64].strip("-")
    return slug or "judge"


def _parse_record(number: int, record: dict, default_run: str) -> VerdictLine:
    """Validate one record in Docket's field names; raise BadLine naming the line and field."""
    for required in ("query_id", "judge", "decision"):
        if record.get(required) in (None, ""):
            raise bad_line(number, f"missing field {required!r}")
    judge = as_text(record["judge"]).strip()
    if len(judge) > 200:
        raise bad_line(number, "judge name is longer than 200 characters")
    decision = record["decision"]
    if decision not in Decision.values:
        raise bad_line(number, f"decision {decision!r} is not one of {', '.join(Decision.values)}")
    run = record.get("run")
    if run is not None and (not isinstance(run, str) or not run.strip() or len(run) > 100):
        raise bad_line(number, "run must be a label of 1-100 characters or null")
    values = {}
    for name in INTEGER_FIELDS:
        value = _number_or(record.get(name), 0, number, name, integer=True)
        if value < 0:
            raise bad_line(number, f"{name} must be a non-negative integer, got {record.get(name)!r}")
        values[name] = int(value)
    latency = record.get("latency_ms")
    if latency is not None:
        latency = _number_or(latency, None, number, "latency_ms")
        if latency < 0:
            raise bad_line(number, f"latency_ms must be a non-negative number, got {record.get('latency_ms')!r}")
    cost = record.get("cost_usd")
    if cost is not None:
        try:
            cost = Decimal(str(cost))
        except InvalidOperation as exc:
            raise bad_line(number, "cost_usd must be a number") from exc
        if not cost.is_finite() or cost < 0 or cost >= 10_000:
            raise bad_line(number, f"cost_usd must be between 0 and 10000, got {record.get('cost_usd')!r}")
        cost = cost.quantize(Decimal("0.00000001"))
    reason = record.get("reason") or ""
    if not isinstance(reason, str):
        raise bad_line(number, "reason must be a string")
    guess = as_text(record.get("error_class_guess")).strip()
    if len(guess) > GUESS_MAX_LENGTH:
        raise bad_line(number, f"error_class_guess is longer than {GUESS_MAX_LENGTH} characters")
    check_storable_text(number, "error_class_guess", guess, error=bad_line)
    for name, text in (("reason", reason), ("judge", judge), ("query_id", as_text(record["query_id"]))):
        check_storable_text(number, name, text, error=bad_line)
    return VerdictLine(
        number=number,
        external_id=as_text(record["query_id"]),
        judge=judge,
        run=(run or default_run).strip(),
        decision=decision,
        reason=reason,
        cost_usd=cost,
        latency_ms=None if latency is None else float(latency),
        error_class_guess=guess,
        unreadable=record.get(UNREADABLE),
        **values,
    )


def _number_or(value, default, number, name, *, integer=False):
    if value is None or value == "":
        return default
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise bad_line(number, f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise bad_line(number, f"{name} must be a number, got {value!r}")
    if integer and int(value) != value:
        raise bad_line(number, f"{name} must be an integer, got {value!r}")
    return value


def _parse_file(path: Path, plan: ImportPlan, unknown_fields: dict[str, int], strict: bool) -> list[VerdictLine]:
    """Parse every record, refusing duplicates of the same (judge, item, run, repeat).

    Fields a record carries beyond Docket's names and the mapped ones are noted in
    `unknown_fields` ({name: first line}); with `strict` the first one stops the import.
    """
    lines, seen = [], {}
    promptfoo_repeats: Counter = Counter()
    known = {*DOCKET_FIELDS, *plan.mapping.values(), UNREADABLE}
    for number, record in read_records(path, plan):
        for name in record:
            if name not in known and name not in unknown_fields:
                if strict:
                    raise bad_line(
                        number, f"unknown field {name!r} (--strict): Docket reads {', '.join(DOCKET_FIELDS)}"
                    )
                unknown_fields[name] = number
        line = _parse_record(number, record, plan.run or DEFAULT_RUN_LABEL)
        if plan.fmt == "promptfoo" and "repeat" not in record:
            # `promptfoo eval --repeat N` writes N results per test and provider, unnumbered.
            key = (line.judge, line.external_id, line.run)
            line = VerdictLine(**{**line.__dict__, "repeat": promptfoo_repeats[key]})
            promptfoo_repeats[key] += 1
        key = (line.judge, line.external_id, line.run, line.repeat)
        if key in seen:
            raise bad_line(number, f"same judge, item, run and repeat as line {seen[key]}")
        seen[key] = number
        lines.append(line)
    return lines


# --- Writing ------------------------------------------------------------------------------------


def _judge_named(name: str) -> Judge | None:
    return Judge.objects.filter(display_name=name).first() or Judge.objects.filter(name=name).first()


def _judge_create(name: str) -> Judge:
    """Create a judge for imported verdicts, slugged from its free-text name."""
    slug, suffix = judge_slug(name), 1
    while Judge.objects.filter(name=slug).exists():
        suffix += 1
        slug = f"{judge_slug(name)[:60]}-{suffix}"
    return Judge.objects.create(
        name=slug, display_name=name if name != slug else "", description="Created by import_verdicts."
    )


def _replay_judge_for(name: str) -> Judge:
    """The judge that holds imported verdicts of this name: one with replay versions only.

    A name Docket already runs (a judge with a vendor or check version) is not it: its
    verdicts were judged by Docket's versions, these elsewhere. They go to a judge of
    their own, "<name> (imported)".
    """
    for title in (name, f"{name} (imported)"):
        judge = _judge_named(title)
        if judge is None:
            return _judge_create(title)
        if not judge.versions.exclude(backend=Backend.REPLAY).exists():
            return judge
    return _judge_create(f"{name} (imported)")


def _replay_versions_for(names: set[str], *, source_format: str) -> dict[str, JudgeVersion]:
    """Return each judge name's replay version for this source format, creating it on first import.

    Never another backend's version: imported verdicts keep their own provenance (marked
    `imported`, with the format they were read from), one version per judge and format.
    """
    versions = {}
    for name in sorted(names):
        judge = _replay_judge_for(name)
        version = (
            judge.versions.filter(backend=Backend.REPLAY, config__imported=True, config__source_format=source_format)
            .order_by("-number")
            .first()
        )
        if version is None:
            number = (judge.versions.aggregate(m=Max("number"))["m"] or 0) + 1
            version = JudgeVersion.objects.create(
                judge=judge,
                number=number,
                backend=Backend.REPLAY,
                config={"imported": True, "source_format": source_format},
            )
        versions[name] = version
    return versions


def _refuse_existing(lines: list[VerdictLine], versions: dict, runs: dict, query_ids: dict) -> None:
    """Raise BadLine for the first line whose verdict is already stored."""
    existing = set(
        Verdict.objects.filter(run__in=[run.pk for run in runs.values() if run.pk]).values_list(
            "judge_version_id", "query_id", "run_id", "repeat"
        )
    )
    for line in lines:
        key = (versions[line.judge].pk, query_ids[line.external_id], runs[line.run].pk, line.repeat)
        if key in existing:
            raise bad_line(line.number, f"this verdict (judge, item, run {line.run!r}, repeat) already exists")


def _decision_counts(judge: str, lines: list[VerdictLine], skipped: list[VerdictLine]) -> dict:
    """Return a judge's accept, reject and error verdicts imported, and its skipped ones (items not in the version)."""
    decisions = Counter(line.decision for line in lines if line.judge == judge)
    return {
        "accept": decisions["accept"],
        "reject": decisions["reject"],
        "error": decisions["error"],
        "skipped": sum(line.judge == judge for line in skipped),
    }


def _refuse_unreadable(lines: list[VerdictLine], plan: ImportPlan) -> None:
    """Refuse the import when every decision of some judge could not be read: its column is misread."""
    by_judge: dict[str, list[VerdictLine]] = {}
    for line in lines:
        by_judge.setdefault(line.judge, []).append(line)
    for judge, own in sorted(by_judge.items()):
        if all(line.unreadable is not None for line in own):
            examples = ", ".join(repr(value) for value in list(dict.fromkeys(line.unreadable for line in own))[:3])
            column = plan.mapping.get("decision", "decision")
            raise bad_line(
                0,
                f"no decision of judge {judge!r} can be read: column {column!r} holds {examples};"
                " map the column that says accept/reject, or use --reject-when VALUE or --positive-means",
            )


@transaction.atomic
def verdicts_import(
    *, path: Path, gold_set_name: str, plan: ImportPlan | None = None, version: int | None = None, strict=False
) -> dict:
    """Import a file of verdicts onto a gold-set version (default the latest), atomically.

    Return a summary: verdicts created per judge, runs, and the items not in the version
    (counted and listed; with `strict` they stop the import).
    """
    plan = plan or ImportPlan()
    gold_set = GoldSet.objects.filter(name=gold_set_name).first()
    if gold_set is None:
        raise GoldSetVersionMissing(f"no gold set named {gold_set_name!r}")
    versions_of_set = gold_set.versions.all()
    chosen = versions_of_set.filter(number=version).first() if version else versions_of_set.order_by("-number").first()
    if chosen is None:
        raise GoldSetVersionMissing(
            f"gold set {gold_set_name!r} has no version {version}"
            if version
            else f"gold set {gold_set_name!r} has no published version"
        )
    query_ids = dict(GoldSetVersionItem.objects.filter(version=chosen).values_list("query__external_id", "query_id"))
    if plan.fmt == "auto":
        plan.fmt = detect_format(path, plan)
    unknown_fields: dict[str, int] = {}
    parsed = _parse_file(path, plan, unknown_fields, strict)
    if not parsed:
        raise bad_line(0, "the file has no verdicts (it is empty)")
    _refuse_unreadable(parsed, plan)
    unknown = [line for line in parsed if line.external_id not in query_ids]
    if unknown and strict:
        first = unknown[0]
        raise bad_line(
            first.number,
            f"item {first.external_id!r} is not in {gold_set_name} v{chosen.number}"
            f" ({len(unknown)} verdicts name items outside the version; --strict)",
        )
    lines = [line for line in parsed if line.external_id in query_ids]
    unknown_ids = sorted({line.external_id for line in unknown})
    summary = {
        "format": plan.fmt,
        "gold_set": gold_set_name,
        "version": chosen.number,
        "verdicts": len(lines),
        "judges": {},
        "runs": [],
        "skipped_unknown_items": len(unknown),
        "unknown_items": unknown_ids,
        "unmeasured_cost": sum(line.cost_usd is None for line in lines),
        "unmeasured_latency": sum(line.latency_ms is None for line in lines),
        "unknown_fields": sorted(unknown_fields),
        "class_guesses": sum(bool(line.error_class_guess) for line in lines),
    }
    if not lines:
        return summary
    versions = _replay_versions_for({line.judge for line in lines}, source_format=plan.fmt)
    runs = {}
    for label in sorted({line.run for line in lines}):
        run, _ = CalibrationRun.objects.get_or_create(
            gold_set_version=chosen, label=label, defaults={"status": RunStatus.COMPLETED, "repeats": 1}
        )
        runs[label] = run
    _refuse_existing(lines, versions, runs, query_ids)
    Verdict.objects.bulk_create(
        [
            Verdict(
                judge_version=versions[line.judge],
                query_id=query_ids[line.external_id],
                run=runs[line.run],
                repeat=line.repeat,
                decision=line.decision,
                reason=line.reason,
                error_class_guess=line.error_class_guess if line.decision == "reject" else "",
                cost_usd=line.cost_usd,
                latency_ms=line.latency_ms,
                input_tokens=line.input_tokens,
                output_tokens=line.output_tokens,
                # Judged elsewhere: no host Docket called, and not the simulator.
                simulated=False,
                endpoint=IMPORTED_ENDPOINT,
                context={"imported": {"format": plan.fmt, "file": path.name}},
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
    # This transaction wrote these verdicts; a run still executing keeps no sums until it completes.
    record_verdict_sums(run.pk for run in runs.values() if run.status == RunStatus.COMPLETED)
    summary["judges"] = {
        name: {
            "slug": versions[name].judge.name,
            "version": versions[name].number,
            "verdicts": n,
            **_decision_counts(name, lines, unknown),
        }
        for name, n in sorted(Counter(line.judge for line in lines).items())
    }
    summary["runs"] = sorted(runs)
    return summary
