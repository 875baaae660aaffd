from django.apps import AppConfig
from django.conf import settings


class TriageConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "triage"

    def ready(self):
        # In eager mode `triage.enqueue` runs a task in place, so this process must have it
        # registered. Otherwise a signature by name is sent to the broker and a worker (which
        # autodiscovers tasks) runs it: a web process or command does not load the pipeline's
        # imports (scikit-learn among them, seconds per process start) for nothing.
        if settings.CELERY_TASK_ALWAYS_EAGER:
            from triage import tasks  # noqa: PLC0415, F401 — task modules import models: only once apps are loaded
