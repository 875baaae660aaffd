from django.contrib import admin

from config.admin_readonly import ReadOnlyAdmin
from judges.models import CalibrationRun, Judge, JudgeVersion, RunChunk, Verdict


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]


@admin.register(JudgeVersion)
class JudgeVersionAdmin(ReadOnlyAdmin):
    """Versions are immutable; editing the judge makes a new one."""

    list_display = ["judge", "number", "backend", "family", "model", "is_simulated"]


@admin.register(CalibrationRun)
class CalibrationRunAdmin(admin.ModelAdmin):
    list_display = ["__str__", "gold_set_version", "status", "repeats", "created_at"]


@admin.register(Verdict)
class VerdictAdmin(ReadOnlyAdmin):
    """A verdict is a record of what a judge said; it is never added or edited by hand."""

    list_display = ["judge_version", "query_id", "run", "repeat", "decision", "cost_usd", "created_at"]
    list_filter = ["decision"]


@admin.register(RunChunk)
class RunChunkAdmin(admin.ModelAdmin):
    list_display = ["run", "judge_version", "repeat", "first_query_id", "last_query_id", "status", "done_count"]
    list_filter = ["status"]
