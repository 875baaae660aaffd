from django.contrib import admin

from probes.models import Catalogue, ProbeRun, Warehouse


@admin.register(Warehouse)
class WarehouseAdmin(admin.ModelAdmin):
    list_display = ["name", "dialect", "read_only_role", "created_at"]


@admin.register(Catalogue)
class CatalogueAdmin(admin.ModelAdmin):
    list_display = ["warehouse", "version", "created_at"]


@admin.register(ProbeRun)
class ProbeRunAdmin(admin.ModelAdmin):
    list_display = ["warehouse", "kind", "outcome", "duration_ms", "created_at"]
    list_filter = ["outcome", "kind"]
