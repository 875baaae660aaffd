"""Import recorded generation attempts (JSONL) onto stored live queries."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from loops.attempts import request_attempts_import


class Command(BaseCommand):
    help = (
        'Import attempts, one JSON object a line: {"request_id", "tier", "attempt", "failure_class", "tokens", '
        '"cost_usd", "latency_ms"}; request_id is the live query\'s external id. All or nothing; re-runs add nothing.'
    )

    def add_arguments(self, parser):
        parser.add_argument("path")

    def handle(self, *args, path, **options):
        try:
            with open(path, encoding="utf-8") as handle:
                result = request_attempts_import(lines=handle)
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        self.stdout.write(
            f"{result['attempts']} attempts of {result['requests']} requests imported (duplicates skipped)"
        )
