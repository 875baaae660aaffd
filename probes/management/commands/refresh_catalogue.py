from django.core.management.base import BaseCommand, CommandError

from probes.catalogue import catalogue_refresh
from probes.management.commands._common import get_warehouse
from probes.role_check import UnsafeWarehouseRole
from probes.warehouses import WarehouseUnavailable


class Command(BaseCommand):
    help = "Introspect a warehouse into a new catalogue version (unchanged schema keeps the version)."

    def add_arguments(self, parser):
        parser.add_argument("warehouse")

    def handle(self, *args, **options):
        warehouse = get_warehouse(options["warehouse"])
        try:
            catalogue = catalogue_refresh(warehouse=warehouse)
        except (WarehouseUnavailable, UnsafeWarehouseRole) as exc:
            raise CommandError(str(exc)) from exc
        tables = catalogue.snapshot.get("tables", {})
        self.stdout.write(f"{warehouse.name}: catalogue v{catalogue.version}, {len(tables)} tables")
        check = catalogue.role_check
        if check.get("applicable") and not check.get("safe"):
            self.stderr.write(
                self.style.ERROR(
                    f"WAREHOUSE_ALLOW_UNSAFE_ROLE is set: login role {check['login_role']!r} can do more than read: "
                    + "; ".join(check["findings"])
                )
            )
