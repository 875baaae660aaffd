from django.contrib import admin

from triage.models import TriageItem


@admin.register(TriageItem)
class TriageItemAdmin(admin.ModelAdmin):
    list_display = ["query", "status", "priority", "assignee", "created_at"]
    list_filter = ["status"]
