"""Print the calibration report of a gold-set version as JSON, CSV or a table."""

import json

from django.core.management.base import BaseCommand, CommandError

from judges.report import build_report
from judges.report_tables import report_as_csv, report_as_table
from judges.run_selection import SOURCE_BOTH, SOURCES, run_selection_parse
from judges.slices import MIN_SLICE
from labelling.models import GoldSetVersion
from labelling.split_models import SPLIT_ALL, SPLIT_CHOICES
from labelling.splits import SplitError, split_part_check


class Command(BaseCommand):
    help = "Print the judges' calibration report on a gold-set version (json, csv or table)."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here: let it replace Django's --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True)
        parser.add_argument("--version", type=int, help="Gold-set version number (default: the latest).")
        parser.add_argument("--generation-cost", type=float, default=0.0, help="USD per generation attempt.")
        parser.add_argument("--baseline", help='Judge to price against: "name" or "name:N".')
        parser.add_argument("--format", choices=["json", "csv", "table"], default="json")
        parser.add_argument(
            "--runs",
            help="Only these runs, by id or label, e.g. 3,join-lint (default: every completed run).",
        )
        parser.add_argument("--slice", metavar="KEY", help="Every judge figure per value of this metadata key too.")
        parser.add_argument(
            "--min-slice",
            type=int,
            default=MIN_SLICE,
            metavar="N",
            help=f"Pool slice values with fewer than N items under 'other' (default {MIN_SLICE}).",
        )
        parser.add_argument("--since", help="Only runs created on or after this date (YYYY-MM-DD).")
        parser.add_argument("--until", help="Only runs created on or before this date (YYYY-MM-DD).")
        parser.add_argument("--source", choices=SOURCES, default=SOURCE_BOTH, help="Which gold items.")
        parser.add_argument(
            "--split", choices=SPLIT_CHOICES, default=SPLIT_ALL, help="Which part of the version's dev/test split."
        )

    def handle(self, *args, gold_set, version, generation_cost, baseline, format, runs, since, until, **options):
        source = options.get("source") or SOURCE_BOTH
        if generation_cost < 0:
            raise CommandError("--generation-cost must not be negative")
        try:
            selection = run_selection_parse(runs=runs, since=since, until=until, source=source)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        versions = GoldSetVersion.objects.filter(gold_set__name=gold_set).select_related("gold_set")
        chosen = versions.filter(number=version).first() if version else versions.order_by("-number").first()
        if chosen is None:
            raise CommandError(f"gold set {gold_set!r} has no version {version or '(none published)'}")
        try:
            split = split_part_check(chosen, options.get("split") or SPLIT_ALL)
        except SplitError as exc:
            raise CommandError(str(exc)) from exc
        if options.get("min_slice", MIN_SLICE) < 1:
            raise CommandError("--min-slice must be at least 1")
        try:
            report = build_report(
                gold_set_version=chosen,
                generation_cost_usd=generation_cost,
                baseline=baseline,
                selection=selection,
                slice_key=options.get("slice"),
                min_slice=options.get("min_slice", MIN_SLICE),
                split=split,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if format == "json":
            self.stdout.write(json.dumps(report, indent=2))
        elif format == "csv":
            self.stdout.write(report_as_csv(report), ending="")
        else:
            self.stdout.write(report_as_table(report), ending="")
