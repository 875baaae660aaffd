"""Export every verdict of a calibration run with its full call trace, one JSON object a line."""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from judges.models import CalibrationRun
from judges.selectors import verdict_trace_list


class Command(BaseCommand):
    help = (
        "Write every verdict of a run as JSON lines: decision, request as sent (never a key), raw "
        "response, usage, cost, latency, retries, endpoint, simulated, catalogue version."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", required=True, help="a run id, or `latest` (the most recently started run)")
        parser.add_argument("--format", choices=["jsonl"], default="jsonl")
        parser.add_argument("--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        run = self.find_run(options["run"])
        out = open(options["output"], "w", encoding="utf-8") if options["output"] else sys.stdout  # noqa: SIM115
        try:
            count = 0
            for row in verdict_trace_list(run=run):
                out.write(json.dumps(row, sort_keys=True, default=str) + "\n")
                count += 1
        finally:
            if options["output"]:
                out.close()
        if options["output"]:
            self.stderr.write(f"{count} verdicts of {run} written to {options['output']}")

    def find_run(self, value: str) -> CalibrationRun:
        if value == "latest":
            run = (
                CalibrationRun.objects.exclude(started_at=None).order_by("-started_at", "-pk").first()
                or CalibrationRun.objects.order_by("-created_at", "-pk").first()
            )
            if run is None:
                raise CommandError("there is no calibration run yet")
            return run
        if not value.isdigit():
            raise CommandError(f"--run must be a run id or `latest`, not {value!r}")
        run = CalibrationRun.objects.filter(pk=int(value)).first()
        if run is None:
            raise CommandError(f"no calibration run {value}")
        return run
