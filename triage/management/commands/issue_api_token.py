from django.core.management.base import BaseCommand

from triage.tokens import api_token_issue


class Command(BaseCommand):
    help = "Issue an API token for a client and print it once."

    def add_arguments(self, parser):
        parser.add_argument("client")
        parser.add_argument("--scope", action="append", dest="scopes", default=None, help="ingest and/or read")

    def handle(self, *args, client, scopes, **options):
        token, plaintext = api_token_issue(client=client, scopes=scopes or ["ingest", "read"])
        self.stdout.write(f"{token}: {plaintext}")
