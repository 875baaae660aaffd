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
an `error` verdict (a fault of the checker, never a rejection). A two-valued column —
1/0, true/false, yes/no, pass/fail — follows `--positive-means accept|reject`; a numeric (or
JSON boolean) column without it is refused, nothing imported. A judge whose every decision
is unreadable is refused too, naming the column and three of its values. `--map
error_class_guess=COL` stores the class a judge named when it rejected (class accuracy).
Fields Docket does not read are named in the summary; `--strict` refuses them.

Judges are named by free text (`openai/gpt-4o`), stored as the judge's display name with
a slug made from it. Missing cost or latency is stored as null (not measured), never as 0.
Verdicts for items not in the chosen version are counted and listed, not imported
(`--strict` makes them fatal).
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from judges.verdict_formats import FORMATS, MAPPABLE, POSITIVE_MEANS, BadLine, ImportPlan
from judges.verdict_import import GoldSetVersionMissing, verdicts_import

LISTED_UNKNOWN = 50  # unknown item ids listed in the summary (all are counted)


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
        parser.add_argument(
            "--positive-means",
            choices=POSITIVE_MEANS,
            help="what a decision of 1/true/yes/pass means (required for a numeric decision column)",
        )
        parser.add_argument("--run", help="run label (default: 'import', or the promptfoo/inspect eval id)")
        parser.add_argument("--promptfoo-judges", choices=["provider", "grader"], default="provider")
        parser.add_argument(
            "--strict", action="store_true", help="verdicts for items not in the version, and unknown fields, are fatal"
        )

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
            positive_means=options.get("positive_means"),
        )
        try:
            summary = verdicts_import(path=path, gold_set_name=gold_set, plan=plan, version=version, strict=strict)
        except GoldSetVersionMissing as exc:
            raise CommandError(str(exc)) from exc
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
        judges = ", ".join(
            f"{name} ({entry['verdicts']}: {entry['accept']} accept, {entry['reject']} reject, {entry['error']} error,"
            f" {entry['skipped']} skipped)"
            for name, entry in summary["judges"].items()
        )
        unknown = ", ".join(summary["unknown_fields"]) or "none"
        self.stdout.write(
            f"imported {summary['verdicts']} verdicts ({summary['format']}) from {len(summary['judges'])} judges"
            f" [{judges}] into runs {', '.join(summary['runs'])} on {gold_set} v{summary['version']}"
            f"; cost not measured on {summary['unmeasured_cost']}, latency on {summary['unmeasured_latency']}"
            f"; class guesses on {summary['class_guesses']}; fields not read: {unknown}"
            f"{skipped_text}"
        )
