"""The audit log in Django's admin: readable, never added to, changed or deleted."""

from auditlog.admin import LogEntryAdmin
from auditlog.models import LogEntry
from django.contrib import admin


class AuditLogEntryAdmin(LogEntryAdmin):
    actions = None

    def has_delete_permission(self, request, obj=None):
        return False


admin.site.unregister(LogEntry)
admin.site.register(LogEntry, AuditLogEntryAdmin)
