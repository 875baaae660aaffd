"""Write the vendor simulator's truth file from the gold labels (for `python -m simulator --truth FILE`)."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from judges.simulator_truth import simulator_truth_path, simulator_truth_write


class Command(BaseCommand):
    help = (
        "Write the gold labels, by SQL text, as the truth file the local vendor simulator reads "
        "(python -m simulator --truth FILE). Refused where the simulator is off (VENDOR_SIMULATOR_ENABLED)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--output", help="Where to write it (default: VAR_DIR/simulator-truth.jsonl).")

    def handle(self, *args, output, **options):
        if not settings.VENDOR_SIMULATOR_ENABLED:
            raise CommandError("the vendor simulator is off here (VENDOR_SIMULATOR_ENABLED): no truth file is written")
        path = Path(output) if output else simulator_truth_path()
        rows = simulator_truth_write(path)
        self.stdout.write(f"simulator truth: {rows} SQL texts written to {path}")
