"""Compare two judge versions on the items both judged: paired bootstrap intervals and exact McNemar."""

import json

from django.core.management.base import BaseCommand, CommandError

from judges.compare import comparison_build
from labelling.split_models import SPLIT_ALL, SPLIT_CHOICES
from labelling.splits import SplitError, split_part_check, version_named


def _interval(figure: dict) -> str:
    if figure["estimate"] is None:
        return "-"
    low, high = figure["ci95"]
    return f"{figure['estimate']:+.3f} [{low:+.3f}, {high:+.3f}]"


def comparison_as_table(result: dict) -> str:
    """Return the comparison as aligned lines of text."""
    a, b = result["a"], result["b"]
    items = result["items"]
    lines = [
        f"A = {a['name']} v{a['version']}, B = {b['name']} v{b['version']}, split {result['split']}: "
        f"{items['total']} items both judged ({items['wrong']} wrong, {items['correct']} correct)",
        f"catch rate B - A:         {_interval(result['catch_rate_diff'])}",
        f"false-reject rate B - A:  {_interval(result['false_reject_rate_diff'])}",
    ]
    if result["mcnemar"]:
        for stratum, test in result["mcnemar"].items():
            lines.append(
                f"McNemar on {stratum} items: B only {test['b_only']}, A only {test['a_only']}, "
                f"p = {test['p_value']:.4g}"
            )
    bootstrap = result["bootstrap"]
    lines.append(f"paired bootstrap: {bootstrap['resamples']} resamples, seed {bootstrap['seed']}")
    lines.append(f"items where they differ: {', '.join(result['differing_items']) or 'none'}")
    lines.append(result["summary"])
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = "Compare judge versions A and B on the items both judged (B - A, paired bootstrap, exact McNemar)."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here: let it replace Django's --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True)
        parser.add_argument("--version", type=int, help="Gold-set version number (default: the latest).")
        parser.add_argument("--a", required=True, help='Judge A: "name" (its latest version here) or "name:N".')
        parser.add_argument("--b", required=True, help='Judge B: "name" or "name:N".')
        parser.add_argument("--split", choices=SPLIT_CHOICES, default=SPLIT_ALL)
        parser.add_argument("--seed", type=int, default=0, help="Seed of the paired bootstrap (default 0).")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, gold_set, version, a, b, split, seed, format, **options):
        try:
            chosen = version_named(gold_set, version)
        except SplitError as exc:
            raise CommandError(str(exc)) from exc
        if seed < 0:
            raise CommandError("--seed must not be negative")
        try:
            split = split_part_check(chosen, split)
            result = comparison_build(gold_set_version=chosen, a=a, b=b, split=split, seed=seed)
        except (SplitError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if format == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(comparison_as_table(result), ending="")
