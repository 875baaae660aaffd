from datetime import timedelta

from django.core.management.base import BaseCommand

from triage.enqueue import live_queries_requeue_stale


class Command(BaseCommand):
    help = "Re-publish live queries pending longer than --minutes (what the beat task does)."

    def add_arguments(self, parser):
        parser.add_argument("--minutes", type=float, default=2.0)

    def handle(self, *args, minutes, **options):
        published = live_queries_requeue_stale(older_than=timedelta(minutes=minutes))
        self.stdout.write(f"re-enqueued {published} live queries")
