"""Audit a gold-set version: references that fail, LIMIT ties, the clock, unpinned shapes, empty answers."""

import json

from django.core.management.base import BaseCommand, CommandError

from labelling.audit import audit_summary, goldset_audit_run
from labelling.models import GoldSetVersion


def report_as_table(report: dict) -> str:
    """Return the audit as aligned text: one line per finding, then the counts per class."""
    lines = [f"{report['gold_set']} v{report['version']}: {report['items_checked']} of {report['items']} items checked"]
    lines += [
        f"{f['item']:<24} {f['severity']:<8} {f['class']:<38} {f['message']}"
        for f in sorted(report["findings"], key=lambda f: (f["item"], f["class"]))
    ]
    lines += ["", *[f"{cls:<38} {n}" for cls, n in report["counts"].items()]]
    lines.append(f"summary: {audit_summary(findings=report['findings'])}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Audit a gold-set version (latest by default) against its warehouse; store and print the findings."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here: let it replace Django's --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True, help="gold set name")
        parser.add_argument("--version", type=int, default=None, help="version number (default: the latest)")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, gold_set, version, format, **options):
        versions = GoldSetVersion.objects.filter(gold_set__name=gold_set, is_frozen=True).select_related("gold_set")
        found = versions.filter(number=version).first() if version else versions.order_by("-number").first()
        if found is None:
            what = f"version {version} of {gold_set!r}" if version else f"a published version of {gold_set!r}"
            raise CommandError(f"no {what}")
        audit = goldset_audit_run(version=found)
        report = {
            "gold_set": found.gold_set.name,
            "version": found.number,
            "items": found.items.count(),
            "items_checked": audit.items_checked,
            "counts": audit.counts,
            "findings": audit.findings,
        }
        self.stdout.write(json.dumps(report, indent=2) if format == "json" else report_as_table(report))
