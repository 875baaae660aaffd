import json

from django.core.management.base import BaseCommand, CommandError

from probes.management.commands._common import get_warehouse, read_sql
from probes.outcome import OutcomeKind
from probes.selectors import catalogue_get_latest
from probes.verifier import verify


class Command(BaseCommand):
    help = (
        "Check one SQL text with the deterministic verifier against a warehouse's latest catalogue. "
        'The JSON says "outcome": passed, failed (with failure_class) or fault (with cause: the check '
        "could not decide, e.g. the warehouse was unreachable)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--warehouse", required=True)
        parser.add_argument("--sql-file", required=True, help="path to the SQL text, or - for stdin")
        parser.add_argument("--format", choices=["json", "text"], default="text")
        parser.add_argument("--no-explain", action="store_true", help="skip the EXPLAIN against the warehouse")

    def handle(self, *args, **options):
        warehouse = get_warehouse(options["warehouse"])
        catalogue = catalogue_get_latest(warehouse_id=warehouse.pk)
        if catalogue is None:
            raise CommandError(f"warehouse {warehouse.name!r} has no catalogue; run refresh_catalogue {warehouse.name}")
        rules = {"explain": False} if options["no_explain"] else None
        result = verify(read_sql(options["sql_file"]), catalogue, warehouse=warehouse, rules=rules)
        if options["format"] == "json":
            self.stdout.write(json.dumps(result.as_dict()))
            return
        match result.outcome.kind:
            case OutcomeKind.PASSED:
                self.stdout.write(f"pass ({result.verifier_version}, catalogue v{result.catalogue_version})")
            case OutcomeKind.FAILED:
                self.stdout.write(f"{result.failure_class}: {result.message}")
            case OutcomeKind.FAULT:
                self.stdout.write(f"could not check ({result.outcome.cause}): {result.message}")
        for finding in result.findings[1:]:
            label = finding["failure_class"] or f"could not check, {finding['cause']}"
            self.stdout.write(f"  also {label} ({finding['rule']}): {finding['message']}")
