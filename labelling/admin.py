from django.contrib import admin

from labelling.models import GoldSet, GoldSetVersion, Label, Query


@admin.register(GoldSet)
class GoldSetAdmin(admin.ModelAdmin):
    list_display = ["name", "overlap_share", "created_at"]


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["external_id", "source", "gold_set", "warehouse", "created_at"]
    list_filter = ["source", "gold_set"]
    search_fields = ["external_id", "question", "sql"]


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = ["query", "labeller", "decision", "error_class", "source", "is_current", "created_at"]
    list_filter = ["decision", "source", "is_current"]


@admin.register(GoldSetVersion)
class GoldSetVersionAdmin(admin.ModelAdmin):
    list_display = ["gold_set", "number", "published_at", "published_by"]

    def has_change_permission(self, request, obj=None):
        return False  # published versions are immutable
