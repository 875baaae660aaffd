from django.contrib import admin

from config.roles import ALLOW_RESULT_EGRESS
from probes.models import Catalogue, ProbeRun, Warehouse
from probes.warehouse_setup import dsn_source


@admin.register(Warehouse)
class WarehouseAdmin(admin.ModelAdmin):
    """Register warehouses by name and dialect; the DSN is set in the environment or secrets file.

    There is deliberately no DSN field: a connection string typed into a form would end up
    in the database, request logs and the admin history.
    """

    list_display = ["name", "dialect", "allow_result_egress", "dsn_source", "created_at"]
    fields = ["name", "dialect", "description", "verifier_rules", "allow_result_egress", "dsn_source"]
    readonly_fields = ["dsn_source"]

    def get_readonly_fields(self, request, obj=None):
        # Sending customer rows to a vendor takes an admin's consent, whoever else edits warehouses.
        if request.user.has_perm(ALLOW_RESULT_EGRESS):
            return self.readonly_fields
        return [*self.readonly_fields, "allow_result_egress"]

    @admin.display(description="DSN source")
    def dsn_source(self, obj):
        """Say where the DSN would come from, never what it is."""
        return dsn_source(obj)


@admin.register(Catalogue)
class CatalogueAdmin(admin.ModelAdmin):
    list_display = ["warehouse", "version", "created_at"]


@admin.register(ProbeRun)
class ProbeRunAdmin(admin.ModelAdmin):
    list_display = ["warehouse", "kind", "outcome", "duration_ms", "created_at"]
    list_filter = ["outcome", "kind"]
