"""Print the labeller agreement of a gold set (or one version's items) as JSON, CSV or a table."""

import json

from django.core.management.base import BaseCommand, CommandError

from config.exports import csv_text
from labelling.agreement_report import agreement_report, agreement_rows
from labelling.models import GoldSet


def figure(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def report_as_table(report: dict) -> str:
    """Return the report as aligned text, figures at 3 decimals, thin support marked with *."""
    mark = lambda low: " *" if low else ""  # noqa: E731
    lines = [
        f"{report['gold_set']}"
        + (f" v{report['version']}" if report["version"] else "")
        + f": {report['items']} items rated twice or more, {report['ratings']} ratings,"
        f" {len(report['raters'])} raters, {report['disagreements']} disagreeing",
        f"kappa on {report['blind_labels']} labels given blind; {report['not_blind_excluded']} excluded"
        " (given after their labeller had been shown other labels of the item)",
        f"Krippendorff's alpha  {figure(report['krippendorff_alpha'])}{mark(report['low_support'])}"
        f"  (with class {figure(report['krippendorff_alpha_with_class'])})",
        f"Fleiss' kappa         {figure(report['fleiss_kappa'])}{mark(report['low_support'])}"
        f"  ({report['fleiss_items']} items with {report['fleiss_raters']} raters each)",
        "",
        "pair  n  cohen_kappa  with_class",
    ]
    for pair in report["pairs"]:
        lines.append(
            f"{pair['a']} / {pair['b']}  {pair['n']}  {figure(pair['cohen_kappa'])}{mark(pair['low_support'])}"
            f"  {figure(pair['cohen_kappa_with_class'])}"
        )
    lines += ["", "error_class  support  alpha  fleiss"]
    for error_class, entry in report["by_error_class"].items():
        lines.append(
            f"{error_class}  {entry['support']}  {figure(entry['krippendorff_alpha'])}"
            f"{mark(entry['low_support'])}  {figure(entry['fleiss_kappa'])}"
        )
    if report["unclassified_left_out"]:
        lines.append(
            f"({report['unclassified_left_out']} unclassified wrong ratings left out of the per-class figures)"
        )
    lines.append(f"* rests on fewer than {report['low_support_below']} ratings")
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = "Print labeller agreement (Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha, per class)."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here: let it replace Django's --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True)
        parser.add_argument("--version", type=int, help="only the items of this gold-set version (default: all)")
        parser.add_argument("--format", choices=["json", "csv", "table"], default="json")

    def handle(self, *args, gold_set, version, format, **options):
        found = GoldSet.objects.filter(name=gold_set).first()
        if found is None:
            raise CommandError(f"no gold set named {gold_set!r}")
        chosen = None
        if version is not None:
            chosen = found.versions.filter(number=version, is_frozen=True).first()
            if chosen is None:
                raise CommandError(f"gold set {gold_set!r} has no version {version}")
        report = agreement_report(gold_set=found, version=chosen)
        if format == "json":
            self.stdout.write(json.dumps(report, indent=2))
        elif format == "csv":
            self.stdout.write(csv_text(*agreement_rows(report)), ending="")
        else:
            self.stdout.write(report_as_table(report), ending="")
