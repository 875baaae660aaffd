"""Read verdict files of other tools into records in Docket's own field names.

Each reader yields (line or record number, record): Docket's JSONL, promptfoo's
`results.json`, inspect-ai eval logs (`.json` or the zipped `.eval`), and any CSV/JSONL
read through a field mapping. `judges/verdict_import.py` validates and stores the records;
the `import_verdicts` command describes the formats for its users.
"""

import csv
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from judges.models import Decision
from labelling.goldset_records import parse_json_line

FORMATS = ("docket", "promptfoo", "inspect", "csv", "jsonl")
MAPPABLE = (
    "query_id",
    "judge",
    "decision",
    "run",
    "repeat",
    "reason",
    "cost_usd",
    "latency_ms",
    "error_class_guess",
)
# Every field of a record in Docket's names; a record's other fields are unknown (named, or refused by --strict).
DOCKET_FIELDS = (*MAPPABLE, "input_tokens", "output_tokens")
# Two-valued decision columns: which value is the positive one is the user's to say (--positive-means).
POSITIVE_VALUES = ("1", "true", "yes", "pass", "passed")
NEGATIVE_VALUES = ("0", "false", "no", "fail", "failed")
POSITIVE_MEANS = ("accept", "reject")
UNREADABLE = "_unreadable"  # set on a record whose decision text could not be read (the raw text)
ACCEPT_WORDS = ("accept", "accepted", "correct", "yes", "pass", "passed", "true", "valid", "ok")
REJECT_WORDS = ("reject", "rejected", "wrong", "incorrect", "no", "fail", "failed", "false", "invalid")


class BadLine(Exception):
    """A line that cannot be imported; the message names the line and the field."""


def bad_line(number, reason) -> BadLine:
    return BadLine(f"line {number}: {reason}" if number else reason)


@dataclass
class ImportPlan:
    """How to read a file: its format, the field mapping and the decision rule."""

    fmt: str = "docket"
    mapping: dict[str, str] = field(default_factory=dict)
    judge: str | None = None
    reject_when: str | None = None
    run: str | None = None
    promptfoo_judges: str = "provider"
    # What a positive value (1, true, yes, pass) of a decision column means: accept or reject.
    positive_means: str | None = None


class NumericDecisions(Exception):
    """A decision column holds numbers or booleans, and nobody said what 1 (or true) means."""


def decision_from_text(value, reject_when: str | None = None, positive_means: str | None = None) -> str:
    """Read accept/reject (or error, when unreadable) from a model's output or a mapped field.

    A two-valued column (1/0, true/false, yes/no, pass/fail) follows `positive_means`; a number
    or a JSON boolean without it raises NumericDecisions: 1 may mean "is a bug" or "is correct",
    and Docket does not guess.
    """
    text = as_text(value).strip()
    if reject_when is not None:
        return Decision.REJECT if text == reject_when else Decision.ACCEPT
    lowered_value = _number_text(text).lower()
    if positive_means is not None and lowered_value in POSITIVE_VALUES + NEGATIVE_VALUES:
        positive = lowered_value in POSITIVE_VALUES
        return Decision.ACCEPT if positive == (positive_means == "accept") else Decision.REJECT
    if isinstance(value, bool) or _is_number(text):
        raise NumericDecisions(text)
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and "decision" in parsed:
            text = as_text(parsed["decision"]).strip()
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


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return bool(text)


def _number_text(text: str) -> str:
    """Return "1" for 1, 1.0 or "1.0" (and "0" likewise): a spreadsheet writes either."""
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number in (0.0, 1.0) else text


def as_text(value) -> str:
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
                record = parse_json_line(number, text, error=bad_line)
                if not isinstance(record, dict):
                    raise bad_line(number, "expected a JSON object")
                yield number, record
        except UnicodeDecodeError:
            raise bad_line(0, "not UTF-8 text") from None


def read_csv(path: Path):
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, strict=True)
        try:
            for record in reader:
                yield reader.line_num, {key: (value if value != "" else None) for key, value in record.items()}
        except csv.Error as exc:
            raise bad_line(reader.line_num, f"bad CSV ({exc})") from None
        except UnicodeDecodeError:
            raise bad_line(0, "not UTF-8 text") from None


def apply_mapping(records, plan: ImportPlan):
    """Read the mapped source fields under Docket's names; a fixed --judge names every verdict."""
    for number, record in records:
        mapped = dict(record)
        for target, source in plan.mapping.items():
            if source not in record:
                raise bad_line(number, f"no field {source!r} (mapped to {target}); fields are {', '.join(record)}")
            mapped[target] = record[source]
        if plan.judge:
            mapped["judge"] = plan.judge
        if "decision" in mapped and (plan.reject_when is not None or plan.mapping.get("decision")):
            raw = mapped["decision"]
            mapped["decision"] = decide(number, raw, plan, plan.mapping.get("decision", "decision"))
            if mapped["decision"] == Decision.ERROR and as_text(raw).strip().lower() != Decision.ERROR:
                mapped[UNREADABLE] = as_text(raw)  # a judge whose every decision is unreadable is refused
        yield number, mapped


def decide(number, raw, plan: ImportPlan, column: str) -> str:
    """Read one decision under the plan; a number nobody explained stops the import, naming the flag."""
    try:
        return decision_from_text(raw, plan.reject_when, plan.positive_means)
    except NumericDecisions:
        raise bad_line(
            number,
            f"{column!r} holds {as_text(raw)!r}: say what a positive value means with"
            " --positive-means accept|reject (is 1 a correct query, or a bug?); nothing was imported",
        ) from None


def load_json_document(path: Path) -> dict:
    try:
        with path.open(encoding="utf-8") as handle:
            document = json.load(handle)
    except json.JSONDecodeError as exc:
        raise bad_line(exc.lineno, f"invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise bad_line(0, "invalid JSON (nested too deeply)") from None
    except UnicodeDecodeError:
        raise bad_line(0, "not UTF-8 text") from None
    if not isinstance(document, dict):
        raise bad_line(0, "expected a JSON object")
    return document


def read_promptfoo(path: Path, plan: ImportPlan):
    """Yield one record per promptfoo result (per provider) or per graded assertion (per grader)."""
    document = load_json_document(path)
    results = document.get("results")
    rows = results.get("results") if isinstance(results, dict) else None
    if not isinstance(rows, list):
        raise bad_line(0, "not a promptfoo results.json (no results.results list)")
    id_var = plan.mapping.get("query_id", "query_id")
    run = plan.run or f"promptfoo {document.get('evalId') or path.stem}"[:100]
    for number, result in enumerate(rows, start=1):
        variables = result.get("vars") or (result.get("testCase") or {}).get("vars") or {}
        if id_var not in variables:
            raise bad_line(number, f"result has no var {id_var!r} naming the item (use --map query_id=VAR)")
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
            decision = decide(number, response.get("output"), plan, "output")
            reason = _reason_of(response.get("output"))
        yield number, {**common, "judge": provider_name, "decision": decision, "reason": reason}


def _reason_of(output) -> str:
    text = as_text(output)
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
            raise bad_line(
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
            raise bad_line(0, "not an inspect-ai .eval log (no header.json)") from None
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
        raise bad_line(0, "not an inspect-ai eval log (no eval header and samples)")
    judge = plan.judge or evaluation.get("model") or "inspect"
    run = plan.run or f"inspect {evaluation.get('eval_id') or evaluation.get('run_id') or path.stem}"[:100]
    scorer = plan.mapping.get("decision")
    for number, sample in enumerate(document["samples"], start=1):
        output = sample.get("output") or {}
        usage = output.get("usage") or {}
        scores = sample.get("scores") or {}
        if scorer is not None and scorer not in scores:
            raise bad_line(number, f"sample has no scorer {scorer!r}; it has {', '.join(scores) or 'none'}")
        score = scores.get(scorer) if scorer else next(iter(scores.values()), None)
        answer = (score or {}).get("answer")
        if sample.get("error"):
            decision, reason = Decision.ERROR, as_text((sample["error"] or {}).get("message", sample["error"]))
        else:
            decision = decide(number, answer if answer is not None else output.get("completion"), plan, "answer")
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
        raise bad_line(0, "cannot tell the format of this JSON file: use --format promptfoo or inspect")
    return "jsonl" if plan.mapping or plan.judge or plan.reject_when is not None else "docket"


def read_records(path: Path, plan: ImportPlan):
    if plan.fmt == "promptfoo":
        return read_promptfoo(path, plan)
    if plan.fmt == "inspect":
        return read_inspect(path, plan)
    records = read_csv(path) if plan.fmt == "csv" else read_jsonl(path)
    return apply_mapping(records, plan) if plan.fmt != "docket" or plan.judge else records
