"""Admin classes for records nobody edits: frozen versions and audit trails.

A published gold-set version, a judge version, a verdict, a label or a resolution event is
evidence: the numbers Docket shows are computed from it and name it. The admin may look at
these rows, never add, change or delete them (they are written by the services that own them).
"""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
