import json

from django.core.management.base import BaseCommand

from probes.execution import run_readonly
from probes.management.commands._common import get_warehouse, read_sql


class Command(BaseCommand):
    help = "Run one SQL text read-only against a warehouse (guard → read-only DB → row cap)."

    def add_arguments(self, parser):
        parser.add_argument("--warehouse", required=True)
        parser.add_argument("--sql-file", required=True, help="path to the SQL text, or - for stdin")
        parser.add_argument("--format", choices=["json", "text"], default="text")
        parser.add_argument("--row-cap", type=int, default=None)
        parser.add_argument("--timeout", type=float, default=None, help="seconds")

    def handle(self, *args, **options):
        warehouse = get_warehouse(options["warehouse"])
        result = run_readonly(
            warehouse=warehouse,
            sql=read_sql(options["sql_file"]),
            row_cap=options["row_cap"],
            timeout_s=options["timeout"],
        )
        if options["format"] == "json":
            self.stdout.write(json.dumps(result.as_dict()))
            return
        if not result.allowed:
            self.stdout.write(f"refused: {result.reason}")
        elif not result.executed:
            self.stdout.write(f"error: {result.error}")
        else:
            self.stdout.write("\t".join(result.columns))
            for row in result.rows:
                self.stdout.write("\t".join("" if v is None else str(v) for v in row))
            self.stdout.write(
                f"({len(result.rows)} rows{', truncated' if result.truncated else ''}, {result.elapsed_ms:.1f} ms)"
            )
