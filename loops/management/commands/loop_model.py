"""Print the loop lab's figures for up to four checkers and "no checker" (seed 000's arithmetic)."""

import json

from django.core.management.base import BaseCommand, CommandError

from loops.loop_model import DEFAULT_SEED, FIGURES, SEED_000_ESCALATION_ACCURACY, SEED_000_RETRY_SUCCESS
from loops.selectors import EnteredInputs, gold_set_version_get, loop_report_build


def shares(text: str) -> tuple[float, ...]:
    """Parse "0.71,0.40" into shares, refusing anything outside [0, 1]."""
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise CommandError(f"expected comma-separated shares such as 0.71,0.40; got {text!r}") from None
    if not values or not all(0.0 <= v <= 1.0 for v in values):
        raise CommandError(f"each share must lie between 0 and 1; got {text!r}")
    return values


def cell(entry: dict) -> str:
    if entry["value"] is None:
        return "-"
    text = f"{entry['value']:.4g}"
    if entry["ci95"]:
        text += f" [{entry['ci95'][0]:.4g}-{entry['ci95'][1]:.4g}]"
    return text


def report_as_table(report: dict) -> str:
    """Return one row per figure and one column per checker."""
    checkers = report["checkers"]
    rows = [["figure", *[c["checker"] for c in checkers]]]
    rows += [[name, *[cell(c[name]) for c in checkers]] for name in FIGURES]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [f"{report['gold_set']} v{report['version']} (seed {report['seed']}, {report['draws']} draws)"]
    lines += ["  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = "Model a generate-check-retry-escalate loop for up to four checkers, with 95% intervals."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here, as in judge_report.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True)
        parser.add_argument("--version", type=int, help="Gold-set version number (default: the latest).")
        parser.add_argument(
            "--checker",
            action="append",
            default=[],
            help='A judge ("name" or "name:N") or ensemble ("a+b", "a+b@majority"); repeat or comma-separate, up to 4.',
        )
        parser.add_argument("--max-attempts", type=int, default=3, help="Generator attempts before escalating.")
        parser.add_argument(
            "--retry-success",
            default=",".join(str(v) for v in SEED_000_RETRY_SUCCESS),
            help="Share of retries that pass, per retry (used where no attempts were recorded).",
        )
        parser.add_argument(
            "--generation-cost", type=float, default=0.0, help="USD per generator call (if unrecorded)."
        )
        parser.add_argument(
            "--generation-latency-ms", type=float, default=0.0, help="Generator latency (if unrecorded)."
        )
        parser.add_argument(
            "--escalation-cost", type=float, help="USD per escalated call; no escalation tier if unset."
        )
        parser.add_argument("--escalation-accuracy", type=float, default=SEED_000_ESCALATION_ACCURACY)
        parser.add_argument("--escalation-latency-ms", type=float, default=0.0)
        parser.add_argument(
            "--retry-pass-correct", type=float, help="Share of passing retries that are correct (default: precision)."
        )
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument("--format", choices=["json", "table"], default="json")

    def handle(self, *args, **options):
        for name in ("generation_cost", "generation_latency_ms", "escalation_cost", "escalation_latency_ms"):
            if options[name] is not None and not options[name] >= 0:
                raise CommandError(f"--{name.replace('_', '-')} must not be negative")
        entered = EnteredInputs(
            max_attempts=options["max_attempts"],
            retry_success=shares(options["retry_success"]),
            generation_cost_usd=options["generation_cost"],
            generation_latency_ms=options["generation_latency_ms"],
            escalation_cost_usd=options["escalation_cost"],
            escalation_accuracy=options["escalation_accuracy"],
            escalation_latency_ms=options["escalation_latency_ms"],
            retry_pass_correct=options["retry_pass_correct"],
        )
        try:
            version = gold_set_version_get(name=options["gold_set"], number=options["version"])
            report = loop_report_build(
                gold_set_version=version, checker_specs=options["checker"], entered=entered, seed=options["seed"]
            )
        except ValueError as error:
            raise CommandError(str(error)) from error
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(report_as_table(report), ending="")
