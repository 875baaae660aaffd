from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from triage.tokens import api_token_issue


class Command(BaseCommand):
    help = "Issue an API token for a client and print it once."

    def add_arguments(self, parser):
        parser.add_argument("client")
        parser.add_argument(
            "--scope", action="append", dest="scopes", default=None, help="ingest and/or read (at least one)"
        )

    def handle(self, *args, client, scopes, **options):
        if not scopes:
            raise CommandError("Give at least one --scope (ingest, read): a token without a scope may do nothing.")
        try:
            token, plaintext = api_token_issue(client=client, scopes=scopes)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(f"{token}: {plaintext}")
