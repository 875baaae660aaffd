"""Import a gold set file (JSONL or CSV) in one transaction and publish a new version."""

from django.core.management.base import BaseCommand, CommandError

from labelling.goldset_io import GoldImportError
from labelling.services import goldset_import


class Command(BaseCommand):
    help = "Import a JSONL or CSV gold set file into a gold set (created if needed) and publish a new version."

    def add_arguments(self, parser):
        parser.add_argument("path", help="JSONL (one object a line) or CSV file")
        parser.add_argument("--gold-set", required=True, help="gold set name (slug)")
        parser.add_argument("--format", choices=["jsonl", "csv"], help="default: from the file's suffix")

    def handle(self, *args, path, gold_set, format=None, **options):
        try:
            version = goldset_import(
                path_or_file=path,
                gold_set_name=gold_set,
                fmt=format,
                progress=lambda line: self.stderr.write(f"... line {line}") if options["verbosity"] > 1 else None,
            )
        except GoldImportError as exc:
            raise CommandError(f"{exc} (nothing was imported)") from exc
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        self.stdout.write(
            f"{version}: {version.items.count()} items published"
            f" ({version.unresolved_count} unresolved left out). {version.note}"
        )
