"""Import a gold set file (JSONL or CSV) in one transaction and publish a new version."""

from django.core.management.base import BaseCommand, CommandError

from labelling.goldset_io import goldset_import
from labelling.goldset_records import GoldImportError
from labelling.models import LabelDecision, ResolutionPolicy


class Command(BaseCommand):
    help = "Import a JSONL or CSV gold set file into a gold set (created if needed) and publish a new version."

    def add_arguments(self, parser):
        parser.add_argument("path", help="JSONL (one object a line) or CSV file")
        parser.add_argument("--gold-set", required=True, help="gold set name (slug)")
        parser.add_argument("--format", choices=["jsonl", "csv"], help="default: from the file's suffix")
        parser.add_argument(
            "--create-labellers",
            action="store_true",
            help="create unknown labellers as users with the labeller role and no usable password",
        )
        parser.add_argument(
            "--positive-means",
            choices=[LabelDecision.CORRECT.value, LabelDecision.WRONG.value],
            default=LabelDecision.CORRECT.value,
            help="what a label of 1/true/yes means (default: correct); 0/false/no mean the other",
        )
        parser.add_argument(
            "--resolve",
            choices=ResolutionPolicy.values,
            default=ResolutionPolicy.MANUAL.value,
            help="how the published version resolves items whose labellers disagree (default: manual)",
        )

    def handle(self, *args, path, gold_set, format=None, **options):
        try:
            version = goldset_import(
                path_or_file=path,
                gold_set_name=gold_set,
                fmt=format,
                progress=lambda line: self.stderr.write(f"... line {line}") if options["verbosity"] > 1 else None,
                create_labellers=options["create_labellers"],
                positive_means=options["positive_means"],
                resolve=options["resolve"],
            )
        except GoldImportError as exc:
            raise CommandError(f"{exc} (nothing was imported)") from exc
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc} (nothing was imported)") from exc
        self.stdout.write(
            f"{version}: {version.items.count()} items published under {version.resolution}"
            f" ({version.left_out_summary}). {version.import_summary.describe()}"
        )
        for entry in version.left_out or []:
            self.stdout.write(f"  left out: {entry['id']} ({entry['reason']})")
