"""Wipe every row of the application database, published gold-set versions included, then seed the demo."""

from django.core.management import call_command
from django.core.management.base import BaseCommand

from labelling.immutability import allow_flush


class Command(BaseCommand):
    help = (
        "Delete every row of the application database — published gold-set versions, which are "
        "otherwise immutable, included — and load the demo again (seed_demo). Django's own `flush` "
        "refuses to delete published versions on SQLite; this is the sanctioned way to start over."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-seed", action="store_true", help="leave the database empty")
        parser.add_argument("--noinput", "--no-input", action="store_false", dest="interactive")

    def handle(self, *, no_seed: bool, interactive: bool, verbosity: int, **options):
        if interactive:
            answer = input("This deletes every row of the application database. Type 'yes' to go on: ")
            if answer.strip() != "yes":
                self.stdout.write("Nothing deleted.")
                return
        with allow_flush():
            call_command("flush", interactive=False, verbosity=verbosity)
        self.stdout.write("Deleted every row.")
        if not no_seed:
            call_command("seed_demo", verbosity=verbosity)
