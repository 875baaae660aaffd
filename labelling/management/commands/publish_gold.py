"""Publish a gold set's current labels as a new immutable version under a resolution policy."""

from django.core.management.base import BaseCommand, CommandError

from labelling.audit import audit_at_publish, audit_summary
from labelling.models import GoldSet, ResolutionPolicy
from labelling.services import goldset_publish


class Command(BaseCommand):
    help = "Publish the gold set's current final labels as a new version (manual, majority or unanimous-only)."

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True, help="gold set name")
        parser.add_argument("--resolve", choices=ResolutionPolicy.values, default=ResolutionPolicy.MANUAL.value)
        parser.add_argument("--note", default="", help="a note stored on the version")
        parser.add_argument("--no-audit", action="store_true", help="skip the audit of the new version")

    def handle(self, *args, gold_set, resolve, note, no_audit=False, **options):
        found = GoldSet.objects.filter(name=gold_set).first()
        if found is None:
            raise CommandError(f"no gold set named {gold_set!r}")
        version = goldset_publish(gold_set=found, note=note, resolve=resolve)
        counts = ", ".join(f"{rule} {n}" for rule, n in version.resolution_counts.items() if n)
        self.stdout.write(
            f"{version}: {version.items.count()} items published under {resolve} ({version.left_out_summary});"
            f" decided by: {counts or 'nothing'}"
        )
        for entry in version.left_out or []:
            self.stdout.write(f"  left out: {entry['id']} ({entry['reason']})")
        if not no_audit:
            self.warn_audit(version)

    def warn_audit(self, version):
        """Audit the new version (when small enough) and warn about each error and warning found."""
        audit = audit_at_publish(version=version)
        if audit is None:
            self.stdout.write(f"audit: not run (large version); run audit_gold --gold-set {version.gold_set}")
            return
        if not audit.findings:
            self.stdout.write("audit: no findings")
            return
        self.stderr.write(self.style.WARNING(f"audit warning: {audit_summary(findings=audit.findings)}"))
        for finding in audit.findings:
            if finding["severity"] != "check":
                self.stderr.write(f"  {finding['item']}: {finding['class']}: {finding['message']}")
