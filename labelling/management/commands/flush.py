"""Django's `flush`, allowed to wipe published gold set versions along with everything else."""

from django.core.management.commands.flush import Command as DjangoFlushCommand

from labelling.immutability import allow_flush


class Command(DjangoFlushCommand):
    def handle(self, **options):
        with allow_flush():
            return super().handle(**options)
