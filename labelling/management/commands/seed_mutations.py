"""Seed wrong variants of a gold set's correct items; propose the ones execution proves wrong."""

import json

from django.core.management.base import BaseCommand, CommandError

from labelling.models import ErrorClass, GoldSet
from labelling.mutations import mutations_seed


class Command(BaseCommand):
    help = (
        "Mutate the correct items of a gold set's latest version (sqlglot transforms), keep the variants whose"
        " result differs from the reference, and add them to the labelling queue as proposed items."
    )

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True, help="gold set name")
        parser.add_argument("--per-item", type=int, required=True, help="kept variants wanted per source item")
        parser.add_argument(
            "--classes", nargs="*", choices=ErrorClass.values, default=None, help="only operators of these classes"
        )
        parser.add_argument("--format", choices=["json"], default="json")
        parser.add_argument("--dry-run", action="store_true", help="print what would be proposed; store nothing")

    def handle(self, *args, gold_set, per_item, classes, dry_run, **options):
        found = GoldSet.objects.filter(name=gold_set).first()
        if found is None:
            raise CommandError(f"no gold set named {gold_set!r}")
        if per_item < 1:
            raise CommandError("--per-item must be at least 1")
        if not found.versions.filter(is_frozen=True).exists():
            raise CommandError(f"{gold_set} has no published version to mutate")
        outcome = mutations_seed(gold_set=found, per_item=per_item, classes=classes or None, propose=not dry_run)
        self.stdout.write(json.dumps(outcome.as_dict(), indent=2))
