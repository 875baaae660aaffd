from django.contrib import admin

from judges.models import CalibrationRun, Judge, JudgeVersion


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]


@admin.register(JudgeVersion)
class JudgeVersionAdmin(admin.ModelAdmin):
    list_display = ["judge", "number", "backend", "family", "model", "is_simulated"]

    def has_change_permission(self, request, obj=None):
        return False  # versions are immutable; edit the judge to make a new one


@admin.register(CalibrationRun)
class CalibrationRunAdmin(admin.ModelAdmin):
    list_display = ["__str__", "gold_set_version", "status", "repeats", "created_at"]
