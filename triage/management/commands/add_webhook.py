from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from triage.alert_models import Webhook
from triage.webhooks import webhook_create


class Command(BaseCommand):
    help = "Register a webhook for alerts and print its signing secret once (Docket stores only a salt)."

    def add_arguments(self, parser):
        parser.add_argument("url")
        parser.add_argument("--kind", choices=Webhook.Kind.values, default=Webhook.Kind.JSON)
        parser.add_argument("--note", default="")

    def handle(self, *args, url, kind, note, **options):
        try:
            webhook, secret = webhook_create(url=url, kind=kind, note=note)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(f"{webhook} (id {webhook.pk})")
        self.stdout.write(f"secret: {secret}")
        self.stdout.write("Shown once: the receiver verifies X-Docket-Signature with it.")
