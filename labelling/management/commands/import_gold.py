"""Import a gold set file (JSONL or CSV) in one transaction and publish a new version."""

from django.core.management.base import BaseCommand, CommandError

from labelling.goldset_io import goldset_import
from labelling.goldset_parser import ParseOptions
from labelling.goldset_records import FIELDS, GoldImportError
from labelling.models import LabelDecision, ResolutionPolicy


class Command(BaseCommand):
    help = (
        "Import a JSONL or CSV gold set file into a gold set (created if needed) and publish a new version."
        f" Fields: {', '.join(FIELDS)} (id, question, sql, label required) and, in JSONL, a metadata object."
        " error_class is one class of the gold set's taxonomy, a JSON list or 'a;b'. The default taxonomy's"
        " classes: unknown_object, join_fanout, misread_intent, aggregation_grain, missing_filter, dropped_rows,"
        " wrong_measure, syntax, dialect, other (and unclassified)."
    )

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

        parser.add_argument(
            "--taxonomy",
            metavar="FILE",
            help="the gold set's error taxonomy: a JSON list of {class, category, description} or a CSV with the"
            " header class,category,description; creates or extends it, and the gold set then uses exactly it",
        )
        parser.add_argument("--taxonomy-name", help="the taxonomy's name (default: the gold set's)")
        parser.add_argument(
            "--create-classes",
            action="store_true",
            help="add the error classes the file uses to the gold set's taxonomy",
        )
        parser.add_argument(
            "--metadata-columns",
            default="",
            help="fields kept as item metadata, comma-separated (e.g. db_id,difficulty)",
        )
        parser.add_argument(
            "--keep-unknown-columns", action="store_true", help="keep every field Docket does not know as item metadata"
        )
        parser.add_argument("--strict", action="store_true", help="refuse fields Docket does not know (by name)")
        parser.add_argument(
            "--warehouse-from", default="", metavar="KEY", help="take each item's warehouse from this metadata key"
        )

    def handle(self, *args, path, gold_set, format=None, **options):
        parse_options = ParseOptions(
            create_labellers=options["create_labellers"],
            create_classes=options["create_classes"],
            positive_means=options["positive_means"],
            metadata_columns=tuple(name.strip() for name in options["metadata_columns"].split(",") if name.strip()),
            keep_unknown=options["keep_unknown_columns"],
            strict=options["strict"],
            warehouse_from=options["warehouse_from"].strip(),
        )
        try:
            version = goldset_import(
                path_or_file=path,
                gold_set_name=gold_set,
                fmt=format,
                progress=lambda line: self.stderr.write(f"... line {line}") if options["verbosity"] > 1 else None,
                resolve=options["resolve"],
                taxonomy_file=options["taxonomy"],
                taxonomy_name=options["taxonomy_name"],
                options=parse_options,
            )
        except GoldImportError as exc:
            raise CommandError(f"{exc} (nothing was imported)") from exc
        except OSError as exc:
            raise CommandError(
                f"cannot read {exc.filename or path}: {exc.strerror or exc} (nothing was imported)"
            ) from exc
        for warning in version.import_summary.warnings():
            self.stdout.write(self.style.WARNING(f"Warning: {warning}"))
        if not version.published_now:
            self.stdout.write(
                f"Nothing changed: no version published; {version} is current ({version.items.count()} items)."
                f" {version.import_summary.describe()}"
            )
            return
        self.stdout.write(
            f"{version}: {version.items.count()} items published under {version.resolution}"
            f" ({version.left_out_summary}). {version.import_summary.describe()}"
        )
        for entry in version.left_out or []:
            self.stdout.write(f"  left out: {entry['id']} ({entry['reason']})")
