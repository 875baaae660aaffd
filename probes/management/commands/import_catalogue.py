from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from probes.catalogue_file import CatalogueFileInvalid, catalogue_import
from probes.models import Dialect


class Command(BaseCommand):
    help = (
        "Import the catalogue of a warehouse Docket cannot reach from CREATE TABLE DDL or an "
        "information_schema.columns CSV export (plus an optional key file) into a new catalogue version; "
        "the warehouse is registered with no connection if absent."
    )

    def add_arguments(self, parser):
        parser.add_argument("warehouse")
        parser.add_argument("file", help="a .sql DDL file, or a .csv export of information_schema.columns")
        parser.add_argument("--dialect", required=True, choices=Dialect.values)
        parser.add_argument("--keys", help="a CSV of primary, unique and foreign keys (see README)")
        parser.add_argument("--description", default="")

    def handle(self, *args, **options):
        try:
            catalogue = catalogue_import(
                name=options["warehouse"],
                path=Path(options["file"]),
                dialect=options["dialect"],
                keys_path=Path(options["keys"]) if options["keys"] else None,
                description=options["description"],
            )
        except CatalogueFileInvalid as exc:
            raise CommandError(str(exc)) from exc
        tables = catalogue.snapshot.get("tables", {})
        self.stdout.write(
            f"{catalogue.warehouse.name}: catalogue v{catalogue.version} from file, no connection, {len(tables)} tables"
        )
