"""A row that a background task advances, for a page's progress bar: one status vocabulary, one percent.

The catalogue refresh (probes), the gold-set audit (labelling) and the monitoring pass (triage)
are each queued by a page, run by a task, and shown with `templates/_progress_bar.html`; the refresh and
the pass are a `RequestedTask` (the audit also runs when a version is published, asked for by no one).
"""

from django.conf import settings
from django.db import models


class TaskStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class TaskProgress:
    """`finished` and `percent` of a model with a TaskStatus `status` and a `progress_counts()` (done, total)."""

    def progress_counts(self) -> tuple[int, int]:
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        return self.status in (TaskStatus.DONE, TaskStatus.FAILED)

    @property
    def percent(self) -> float:
        done, total = self.progress_counts()
        if self.status == TaskStatus.DONE:
            done = total
        return round(100 * done / total, 1) if total else 0.0


class RequestedTask(TaskProgress, models.Model):
    """A task asked for by someone in the browser: who, when, when it ended and how (`message`), newest first."""

    message = models.TextField(blank=True)  # the outcome in words, or why it failed
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-pk"]
