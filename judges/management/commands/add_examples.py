"""Add dev-split gold items as worked examples of a judge version (a test item is refused)."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from judges.examples import judge_version_examples_add
from judges.models import JudgeVersion
from labelling.splits import SplitError, version_named


class Command(BaseCommand):
    help = "Show dev-split gold items to a judge version as worked examples; it is never scored on them."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here: let it replace Django's --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--judge", required=True, help='"name:N" (a version without verdicts yet).')
        parser.add_argument("--gold-set", required=True)
        parser.add_argument("--version", type=int, help="Gold-set version number (default: the latest).")
        parser.add_argument("ids", nargs="+", help="External ids of dev-split items.")

    def handle(self, *args, judge, gold_set, version, ids, **options):
        name, _, number = judge.partition(":")
        found = JudgeVersion.objects.filter(judge__name=name, number=int(number or 0)).first() if number else None
        if found is None:
            raise CommandError(f"no judge version {judge!r}: name it as name:N")
        try:
            chosen = version_named(gold_set, version)
            examples = judge_version_examples_add(judge_version=found, gold_set_version=chosen, external_ids=ids)
        except (SplitError, ValidationError) as exc:
            raise CommandError(" ".join(getattr(exc, "messages", [str(exc)]))) from exc
        self.stdout.write(f"{found}: {found.examples.count()} worked example(s); added or kept {len(examples)}")
