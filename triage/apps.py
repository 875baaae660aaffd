from django.apps import AppConfig


class TriageConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "triage"

    def ready(self):
        # Register the triage tasks in every process, so `triage.enqueue` finds them by name
        # (and eager mode runs them in place) without importing them into the services.
        from triage import tasks  # noqa: PLC0415, F401 — task modules import models: only once apps are loaded
