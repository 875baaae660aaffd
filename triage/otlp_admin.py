"""Admin of OTLP ingestion: each client's attribute mapping (edited here) and its counters (read-only)."""

from django.contrib import admin

from config.admin_readonly import ReadOnlyAdmin
from triage.otlp_models import OtlpExportCounts, OtlpHeldSpan, OtlpMapping, otlp_mapping_forget


@admin.register(OtlpMapping)
class OtlpMappingAdmin(admin.ModelAdmin):
    """A client's mapping applies to its next export (other web processes: within a few seconds)."""

    list_display = ["client", "sql_attributes", "warehouse_attributes", "question_attributes", "updated_at"]
    fieldsets = [
        (None, {"fields": ["client"]}),
        ("Query", {"fields": ["sql_attributes", "dialect_attributes"]}),
        ("Warehouse", {"fields": ["warehouse_attributes", "warehouse_aliases", "default_warehouse"]}),
        ("Question", {"fields": ["question_attributes", "question_from_genai", "parent_wait_seconds"]}),
        ("Generation attempts", {"fields": ["attempt_prefix"]}),
    ]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        otlp_mapping_forget(client=obj.client)

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        otlp_mapping_forget(client=obj.client)


@admin.register(OtlpExportCounts)
class OtlpExportCountsAdmin(ReadOnlyAdmin):
    list_display = [
        "client",
        "exports",
        "spans_received",
        "queries_ingested",
        "spans_rejected",
        "spans_ignored",
        "last_export_at",
    ]


@admin.register(OtlpHeldSpan)
class OtlpHeldSpanAdmin(ReadOnlyAdmin):
    list_display = ["client", "trace_id", "span_id", "received_at"]
    list_filter = ["client"]
