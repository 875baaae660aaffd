"""Import verdicts of judges run elsewhere onto a gold-set version: all lines or none.

Formats (`--format`, default from the file):

- `docket`: Docket's own JSONL, one verdict a line (`query_id`, `judge`, `decision` in
  accept/reject/error, optional `run`, `repeat`, `reason`, `cost_usd`, `latency_ms`,
  `input_tokens`, `output_tokens`).
- `promptfoo`: promptfoo's `results.json` (`promptfoo eval -o results.json`): one judge per
  provider (its label, else its id), whose output is the verdict; or, with
  `--promptfoo-judges grader`, one judge per assertion (its metric, else its type) whose
  pass is an accept. The item id is the test's `query_id` var (or `--map query_id=VAR`).
- `inspect`: an inspect-ai eval log (`.json`, or the zipped `.eval`): the judge is the
  log's model, the item the sample id, the repeat the epoch; the decision is the first
  scorer's extracted answer (or `--map decision=SCORER`), else the model's completion.
- `csv` / `jsonl` with `--map docket_field=source_field` and `--judge NAME`: any table.

A decision read from text (a model's output, a mapped field) is `reject` when it equals
`--reject-when` (if given); otherwise JSON with a `decision` key, or the words
accept/reject (and correct/wrong, yes/no, pass/fail, true/false) decide; anything else is
an `error` verdict (a fault of the checker, never a rejection).

Judges are named by free text (`openai/gpt-4o`), stored as the judge's display name with
a slug made from it. Missing cost or latency is stored as null (not measured), never as 0.
Verdicts for items not in the chosen version are counted and listed, not imported
(`--strict` makes them fatal).
"""

import csv
import json
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from judges.models import Backend, CalibrationRun, Decision, Judge, JudgeVersion, RunStatus, Verdict
from labelling.goldset_records import check_storable_text, parse_json_line
from labelling.models import GoldSet, GoldSetVersionItem

# A line without a run label goes into this run, so the report (which reads runs) sees it.
DEFAULT_RUN_LABEL = "import"
INTEGER_FIELDS = ("repeat", "input_tokens", "output_tokens")
FORMATS = ("docket", "promptfoo", "inspect", "csv", "jsonl")
MAPPABLE = ("query_id", "judge", "decision", "run", "repeat", "reason", "cost_usd", "latency_ms")
ACCEPT_WORDS = ("accept", "accepted", "correct", "yes", "pass", "passed", "true", "valid", "ok")
REJECT_WORDS = ("reject", "rejected", "wrong", "incorrect", "no", "fail", "failed", "false", "invalid")
LISTED_UNKNOWN = 50  # unknown item ids listed in the summary (all are counted)


class BadLine(Exception):
    """A line that cannot be imported; the message names the line and the field."""


def _bad(number, reason):
    return BadLine(f"line {number}: {reason}" if number else reason)


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


@dataclass
class ImportPlan:
    """How to read a file: its format, the field mapping and the decision rule."""

    fmt: str = "docket"
    mapping: dict[str, str] = field(default_factory=dict)
    judge: str | None = None
    reject_when: str | None = None
    run: str | None = None
    promptfoo_judges: str = "provider"


def judge_slug(name: str) -> str:
    """Return the slug of a free-text judge name: "openai/gpt-4o" -> "openai-gpt-4o"."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", name.strip().lower()).strip("-")[:64].strip("-")
    return slug or "judge"


def decision_from_text(value, reject_when: str | None = None) -> str:
    """Read accept/reject (or error, when unreadable) from a model's output or a mapped field."""
    text = _as_text(value).strip()
    if reject_when is not None:
        return Decision.REJECT if text == reject_when else Decision.ACCEPT
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and "decision" in parsed:
            text = _as_text(parsed["decision"]).strip()
    lowered = text.lower()
    if lowered in Decision.values:
        return lowered
    first = re.match(r"[a-z]+", lowered)
    word = first.group(0) if first else ""
    if word in ACCEPT_WORDS:
        return Decision.ACCEPT
    if word in REJECT_WORDS:
        return Decision.REJECT
    return Decision.ERROR


def _as_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


# --- Readers: each yields (line or record number, a record in Docket's own field names) ---------


def read_jsonl(path: Path):
    with path.open(encoding="utf-8") as handle:
        try:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                record = parse_json_line(number, text, error=_bad)
                if not isinstance(record, dict):
                    raise _bad(number, "expected a JSON object")
                yield number, record
        except UnicodeDecodeError:
            raise _bad(0, "not UTF-8 text") from None


def read_csv(path: Path):
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, strict=True)
        try:
            for record in reader:
                yield reader.line_num, {key: (value if value != "" else None) for key, value in record.items()}
        except csv.Error as exc:
            raise _bad(reader.line_num, f"bad CSV ({exc})") from None
        except UnicodeDecodeError:
            raise _bad(0, "not UTF-8 text") from None


def apply_mapping(records, plan: ImportPlan):
    """Read the mapped source fields under Docket's names; a fixed --judge names every verdict."""
    for number, record in records:
        mapped = dict(record)
        for target, source in plan.mapping.items():
            if source not in record:
                raise _bad(number, f"no field {source!r} (mapped to {target}); fields are {', '.join(record)}")
            mapped[target] = record[source]
        if plan.judge:
            mapped["judge"] = plan.judge
        if "decision" in mapped and (plan.reject_when is not None or plan.mapping.get("decision")):
            mapped["decision"] = decision_from_text(mapped["decision"], plan.reject_when)
        yield number, mapped


def load_json_document(path: Path) -> dict:
    try:
        with path.open(encoding="utf-8") as handle:
            document = json.load(handle)
    except json.JSONDecodeError as exc:
        raise _bad(exc.lineno, f"invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise _bad(0, "invalid JSON (nested too deeply)") from None
    except UnicodeDecodeError:
        raise _bad(0, "not UTF-8 text") from None
    if not isinstance(document, dict):
        raise _bad(0, "expected a JSON object")
    return document


def read_promptfoo(path: Path, plan: ImportPlan):
    """Yield one record per promptfoo result (per provider) or per graded assertion (per grader)."""
    document = load_json_document(path)
    results = document.get("results")
    rows = results.get("results") if isinstance(results, dict) else None
    if not isinstance(rows, list):
        raise _bad(0, "not a promptfoo results.json (no results.results list)")
    id_var = plan.mapping.get("query_id", "query_id")
    run = plan.run or f"promptfoo {document.get('evalId') or path.stem}"[:100]
    for number, result in enumerate(rows, start=1):
        variables = result.get("vars") or (result.get("testCase") or {}).get("vars") or {}
        if id_var not in variables:
            raise _bad(number, f"result has no var {id_var!r} naming the item (use --map query_id=VAR)")
        provider = result.get("provider") or {}
        provider_name = plan.judge or provider.get("label") or provider.get("id") or "promptfoo"
        response = result.get("response") or {}
        usage = response.get("tokenUsage") or result.get("tokenUsage") or {}
        common = {
            "query_id": variables[id_var],
            "run": run,
            "input_tokens": usage.get("prompt") or 0,
            "output_tokens": usage.get("completion") or 0,
            # promptfoo writes a cost of 0 when it has no price for the model: not measured.
            "cost_usd": result.get("cost") or None,
            "latency_ms": result.get("latencyMs", response.get("latencyMs")),
        }
        if plan.promptfoo_judges == "grader":
            for part in (result.get("gradingResult") or {}).get("componentResults") or []:
                assertion = part.get("assertion") or {}
                grader = assertion.get("metric") or assertion.get("type") or "grader"
                yield (
                    number,
                    {
                        **common,
                        "judge": f"{provider_name} / {grader}",
                        "decision": Decision.ACCEPT if part.get("pass") else Decision.REJECT,
                        "reason": part.get("reason") or "",
                    },
                )
            continue
        if result.get("error") and not response.get("output"):
            decision, reason = Decision.ERROR, str(result["error"])
        else:
            decision = decision_from_text(response.get("output"), plan.reject_when)
            reason = _reason_of(response.get("output"))
        yield number, {**common, "judge": provider_name, "decision": decision, "reason": reason}


def _reason_of(output) -> str:
    text = _as_text(output)
    try:
        parsed = json.loads(text) if text.strip().startswith("{") else None
    except (json.JSONDecodeError, RecursionError):
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("reason"), str):
        return parsed["reason"]
    return text[:2000]


def load_inspect_log(path: Path) -> dict:
    """Return an inspect-ai log as one dict: `.eval` (zip of header + samples) or `.json`."""
    if zipfile.is_zipfile(path):
        try:
            return _read_eval_archive(path)
        except NotImplementedError:
            # Recent inspect-ai compresses .eval members with zstandard, which Python's
            # zipfile cannot read before 3.14.
            raise _bad(
                0,
                "this .eval log is compressed in a way Python cannot read here: convert it with"
                " `inspect log convert --to json LOG` and import the .json",
            ) from None
    return load_json_document(path)


def _read_eval_archive(path: Path) -> dict:
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        try:
            document = json.loads(archive.read(header_name))
        except KeyError:
            raise _bad(0, "not an inspect-ai .eval log (no header.json)") from None
        document["samples"] = [
            json.loads(archive.read(name))
            for name in sorted(names)
            if name.startswith("samples/") and name.endswith(".json")
        ]
        return document


def read_inspect(path: Path, plan: ImportPlan):
    """Yield one record per sample (and epoch) of an inspect-ai eval log."""
    document = load_inspect_log(path)
    evaluation = document.get("eval")
    if not isinstance(evaluation, dict) or not isinstance(document.get("samples"), list):
        raise _bad(0, "not an inspect-ai eval log (no eval header and samples)")
    judge = plan.judge or evaluation.get("model") or "inspect"
    run = plan.run or f"inspect {evaluation.get('eval_id') or evaluation.get('run_id') or path.stem}"[:100]
    scorer = plan.mapping.get("decision")
    for number, sample in enumerate(document["samples"], start=1):
        output = sample.get("output") or {}
        usage = output.get("usage") or {}
        scores = sample.get("scores") or {}
        if scorer is not None and scorer not in scores:
            raise _bad(number, f"sample has no scorer {scorer!r}; it has {', '.join(scores) or 'none'}")
        score = scores.get(scorer) if scorer else next(iter(scores.values()), None)
        answer = (score or {}).get("answer")
        if sample.get("error"):
            decision, reason = Decision.ERROR, _as_text((sample["error"] or {}).get("message", sample["error"]))
        else:
            decision = decision_from_text(answer if answer is not None else output.get("completion"), plan.reject_when)
            reason = _reason_of(output.get("completion"))
        seconds = output.get("time")
        yield (
            number,
            {
                "query_id": sample.get("id"),
                "judge": judge,
                "run": run,
                "repeat": max(0, int(sample.get("epoch") or 1) - 1),
                "decision": decision,
                "reason": reason,
                "input_tokens": usage.get("input_tokens") or 0,
                "output_tokens": usage.get("output_tokens") or 0,
                "cost_usd": None,  # inspect-ai logs carry tokens, not prices
                "latency_ms": None if seconds is None else round(float(seconds) * 1000, 3),
            },
        )


def detect_format(path: Path, plan: ImportPlan) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix == ".eval":
        return "inspect"
    if suffix == ".json":
        document = load_json_document(path)
        if "eval" in document and "samples" in document:
            return "inspect"
        if isinstance(document.get("results"), dict) and isinstance(document["results"].get("results"), list):
            return "promptfoo"
        raise _bad(0, "cannot tell the format of this JSON file: use --format promptfoo or inspect")
    return "jsonl" if plan.mapping or plan.judge or plan.reject_when is not None else "docket"


def read_records(path: Path, plan: ImportPlan):
    if plan.fmt == "promptfoo":
        return read_promptfoo(path, plan)
    if plan.fmt == "inspect":
        return read_inspect(path, plan)
    records = read_csv(path) if plan.fmt == "csv" else read_jsonl(path)
    return apply_mapping(records, plan) if plan.fmt != "docket" or plan.judge else records


# --- Validation ---------------------------------------------------------------------------------


def parse_record(number: int, record: dict, default_run: str) -> VerdictLine:
    """Validate one record in Docket's field names; raise BadLine naming the line and field."""
    for required in ("query_id", "judge", "decision"):
        if record.get(required) in (None, ""):
            raise _bad(number, f"missing field {required!r}")
    judge = _as_text(record["judge"]).strip()
    if len(judge) > 200:
        raise _bad(number, "judge name is longer than 200 characters")
    decision = record["decision"]
    if decision not in Decision.values:
        raise _bad(number, f"decision {decision!r} is not one of {', '.join(Decision.values)}")
    run = record.get("run")
    if run is not None and (not isinstance(run, str) or not run.strip() or len(run) > 100):
        raise _bad(number, "run must be a label of 1-100 characters or null")
    values = {}
    for name in INTEGER_FIELDS:
        value = _number_or(record.get(name), 0, number, name, integer=True)
        if value < 0:
            raise _bad(number, f"{name} must be a non-negative integer, got {record.get(name)!r}")
        values[name] = int(value)
    latency = record.get("latency_ms")
    if latency is not None:
        latency = _number_or(latency, None, number, "latency_ms")
        if latency < 0:
            raise _bad(number, f"latency_ms must be a non-negative number, got {record.get('latency_ms')!r}")
    cost = record.get("cost_usd")
    if cost is not None:
        try:
            cost = Decimal(str(cost))
        except InvalidOperation as exc:
            raise _bad(number, "cost_usd must be a number") from exc
        if not cost.is_finite() or cost < 0 or cost >= 10_000:
            raise _bad(number, f"cost_usd must be between 0 and 10000, got {record.get('cost_usd')!r}")
        cost = cost.quantize(Decimal("0.00000001"))
    reason = record.get("reason") or ""
    if not isinstance(reason, str):
        raise _bad(number, "reason must be a string")
    for name, text in (("reason", reason), ("judge", judge), ("query_id", _as_text(record["query_id"]))):
        check_storable_text(number, name, text, error=_bad)
    return VerdictLine(
        number=number,
        external_id=_as_text(record["query_id"]),
        judge=judge,
        run=(run or default_run).strip(),
        decision=decision,
        reason=reason,
        cost_usd=cost,
        latency_ms=None if latency is None else float(latency),
        **values,
    )


def _number_or(value, default, number, name, *, integer=False):
    if value is None or value == "":
        return default
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise _bad(number, f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise _bad(number, f"{name} must be a number, got {value!r}")
    if integer and int(value) != value:
        raise _bad(number, f"{name} must be an integer, got {value!r}")
    return value


def parse_file(path: Path, plan: ImportPlan) -> list[VerdictLine]:
    """Parse every record, refusing duplicates of the same (judge, item, run, repeat)."""
    lines, seen = [], {}
    promptfoo_repeats: Counter = Counter()
    for number, record in read_records(path, plan):
        line = parse_record(number, record, plan.run or DEFAULT_RUN_LABEL)
        if plan.fmt == "promptfoo" and "repeat" not in record:
            # `promptfoo eval --repeat N` writes N results per test and provider, unnumbered.
            key = (line.judge, line.external_id, line.run)
            line = VerdictLine(**{**line.__dict__, "repeat": promptfoo_repeats[key]})
            promptfoo_repeats[key] += 1
        key = (line.judge, line.external_id, line.run, line.repeat)
        if key in seen:
            raise _bad(number, f"same judge, item, run and repeat as line {seen[key]}")
        seen[key] = number
        lines.append(line)
    return lines


# --- Writing ------------------------------------------------------------------------------------


def judge_versions_for(names: set[str]) -> dict[str, JudgeVersion]:
    """Return each judge's latest version by display name, creating unknown judges as `replay` v1."""
    versions = {}
    for name in sorted(names):
        judge = Judge.objects.filter(display_name=name).first() or Judge.objects.filter(name=name).first()
        if judge is None:
            slug, suffix = judge_slug(name), 1
            while Judge.objects.filter(name=slug).exists():
                suffix += 1
                slug = f"{judge_slug(name)[:60]}-{suffix}"
            judge = Judge.objects.create(
                name=slug, display_name=name if name != slug else "", description="Created by import_verdicts."
            )
        version = judge.latest_version or JudgeVersion.objects.create(judge=judge, number=1, backend=Backend.REPLAY)
        versions[name] = version
    return versions


def refuse_existing(lines: list[VerdictLine], versions: dict, runs: dict, query_ids: dict) -> None:
    """Raise BadLine for the first line whose verdict is already stored."""
    existing = set(
        Verdict.objects.filter(run__in=[run.pk for run in runs.values() if run.pk]).values_list(
            "judge_version_id", "query_id", "run_id", "repeat"
        )
    )
    for line in lines:
        key = (versions[line.judge].pk, query_ids[line.external_id], runs[line.run].pk, line.repeat)
        if key in existing:
            raise _bad(line.number, f"this verdict (judge, item, run {line.run!r}, repeat) already exists")


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
        raise CommandError(f"no gold set named {gold_set_name!r}")
    versions_of_set = gold_set.versions.all()
    chosen = versions_of_set.filter(number=version).first() if version else versions_of_set.order_by("-number").first()
    if chosen is None:
        raise CommandError(
            f"gold set {gold_set_name!r} has no version {version}"
            if version
            else f"gold set {gold_set_name!r} has no published version"
        )
    query_ids = dict(GoldSetVersionItem.objects.filter(version=chosen).values_list("query__external_id", "query_id"))
    if plan.fmt == "auto":
        plan.fmt = detect_format(path, plan)
    parsed = parse_file(path, plan)
    if not parsed:
        raise _bad(0, "the file has no verdicts (it is empty)")
    unknown = [line for line in parsed if line.external_id not in query_ids]
    if unknown and strict:
        first = unknown[0]
        raise _bad(
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
    }
    if not lines:
        return summary
    versions = judge_versions_for({line.judge for line in lines})
    runs = {}
    for label in sorted({line.run for line in lines}):
        run, _ = CalibrationRun.objects.get_or_create(
            gold_set_version=chosen, label=label, defaults={"status": RunStatus.COMPLETED, "repeats": 1}
        )
        runs[label] = run
    refuse_existing(lines, versions, runs, query_ids)
    Verdict.objects.bulk_create(
        [
            Verdict(
                judge_version=versions[line.judge],
                query_id=query_ids[line.external_id],
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
    summary["judges"] = {
        name: {"slug": versions[name].judge.name, "verdicts": n}
        for name, n in sorted(Counter(line.judge for line in lines).items())
    }
    summary["runs"] = sorted(runs)
    return summary


def parse_mapping(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs or []:
        target, sep, source = pair.partition("=")
        if not sep or not target or not source:
            raise CommandError(f"--map {pair!r}: write DOCKET_FIELD=SOURCE_FIELD, e.g. query_id=item")
        if target not in MAPPABLE:
            raise CommandError(f"--map {pair!r}: {target!r} is not one of {', '.join(MAPPABLE)}")
        mapping[target] = source
    return mapping


class Command(BaseCommand):
    help = (
        "Import verdicts (Docket JSONL, promptfoo results.json, inspect-ai logs, or any CSV/JSONL with --map) "
        "onto a gold-set version; a bad line imports nothing."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here: let it replace Django's --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--gold-set", required=True, help="Name of the gold set the item ids belong to.")
        parser.add_argument("--version", type=int, help="Gold-set version number (default: the latest).")
        parser.add_argument("--format", choices=["auto", *FORMATS], default="auto")
        parser.add_argument("--judge", help='Judge name for every verdict, free text (e.g. "openai/gpt-4o").')
        parser.add_argument(
            "--map", action="append", default=[], metavar="FIELD=SOURCE", help="read Docket's FIELD from SOURCE"
        )
        parser.add_argument("--reject-when", help="a decision equal to this value is a reject, any other an accept")
        parser.add_argument("--run", help="run label (default: 'import', or the promptfoo/inspect eval id)")
        parser.add_argument("--promptfoo-judges", choices=["provider", "grader"], default="provider")
        parser.add_argument("--strict", action="store_true", help="verdicts for items not in the version are fatal")

    def handle(self, *args, path, gold_set, version, format, judge, map, reject_when, run, strict, **options):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        plan = ImportPlan(
            fmt=format,
            mapping=parse_mapping(map),
            judge=judge.strip() if judge else None,
            reject_when=reject_when,
            run=run,
            promptfoo_judges=options["promptfoo_judges"],
        )
        try:
            summary = verdicts_import(path=path, gold_set_name=gold_set, plan=plan, version=version, strict=strict)
        except BadLine as exc:
            raise CommandError(f"{path}: {exc}; nothing was imported") from exc
        skipped = summary["skipped_unknown_items"]
        listed = summary["unknown_items"][:LISTED_UNKNOWN]
        more = len(summary["unknown_items"]) - len(listed)
        skipped_text = (
            f"; skipped {skipped} verdicts for {len(summary['unknown_items'])} items not in {gold_set}"
            f" v{summary['version']}: {', '.join(listed)}{f' and {more} more' if more else ''}"
            if skipped
            else ""
        )
        if not summary["verdicts"]:
            raise CommandError(f"{path}: no verdict names an item of {gold_set} v{summary['version']}{skipped_text}")
        judges = ", ".join(f"{name} ({entry['verdicts']})" for name, entry in summary["judges"].items())
        self.stdout.write(
            f"imported {summary['verdicts']} verdicts ({summary['format']}) from {len(summary['judges'])} judges"
            f" [{judges}] into runs {', '.join(summary['runs'])} on {gold_set} v{summary['version']}"
            f"; cost not measured on {summary['unmeasured_cost']}, latency on {summary['unmeasured_latency']}"
            f"{skipped_text}"
        )
