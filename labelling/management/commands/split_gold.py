"""Split a published gold-set version into dev and test (once), stratified by label and error class."""

import json

from django.core.management.base import BaseCommand, CommandError

from labelling.splits import SplitError, goldset_split, split_as_dict, version_named


class Command(BaseCommand):
    help = "Split a published gold-set version into dev and test items, stratified by label and error class."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version means the gold-set version here: let it replace Django's --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", required=True)
        parser.add_argument("--version", type=int, help="Gold-set version number (default: the latest).")
        parser.add_argument("--test-share", type=float, default=0.5, help="Share of items held out as test.")
        parser.add_argument("--seed", type=int, required=True, help="The same items and seed give the same split.")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, gold_set, version, test_share, seed, format, **options):
        try:
            chosen = version_named(gold_set, version)
        except SplitError as exc:
            raise CommandError(str(exc)) from exc
        try:
            split = goldset_split(version=chosen, test_share=test_share, seed=seed)
        except SplitError as exc:
            raise CommandError(str(exc)) from exc
        result = split_as_dict(split)
        if format == "json":
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(f"{chosen} split with seed {seed}: {len(result['test'])} test, {len(result['dev'])} dev")
        for part in ("dev", "test"):
            counts = result["counts"][part]
            classes = ", ".join(f"{name} {n}" for name, n in counts["by_class"].items()) or "none"
            self.stdout.write(
                f"  {part}: {counts['items']} items ({counts['wrong']} wrong, {counts['correct']} correct); {classes}"
            )
