"""Register the SQLite files of a folder (Spider's and BIRD's layout) as read-only warehouses, with catalogues."""

from django.core.management.base import BaseCommand, CommandError

from probes.role_check import UnsafeWarehouseRole
from probes.sqlite_dir import sqlite_dir_register
from probes.warehouses import WarehouseUnavailable


class Command(BaseCommand):
    help = (
        "Register each SQLite file under --sqlite-dir (e.g. database/<db_id>/<db_id>.sqlite) as a read-only"
        " warehouse named after the file, opened mode=ro&immutable=1, and introspect its catalogue."
    )

    def add_arguments(self, parser):
        parser.add_argument("--sqlite-dir", required=True, metavar="DIR", help="folder of SQLite files")
        parser.add_argument("--no-catalogue", action="store_true", help="register only; refresh catalogues later")

    def handle(self, *args, sqlite_dir, no_catalogue, **options):
        try:
            result = sqlite_dir_register(directory=sqlite_dir, catalogue=not no_catalogue)
        except (ValueError, WarehouseUnavailable, UnsafeWarehouseRole) as exc:
            raise CommandError(str(exc)) from exc
        for name, tables in result.registered:
            self.stdout.write(f"{name}: registered read-only" + ("" if no_catalogue else f", {tables} tables"))
        for path, why in result.skipped:
            self.stderr.write(f"skipped {path}: {why}")
        self.stdout.write(f"{len(result.registered)} warehouses registered, {len(result.skipped)} files skipped.")
