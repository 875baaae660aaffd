"""A row that a background task advances, for a page's progress bar: one status vocabulary, one percent.

The catalogue refresh (probes), the gold-set audit (labelling) and the monitoring pass (triage)
are each queued by a page, run by a task, and shown with `templates/_progress_bar.html`; the refresh and
the pass are a `RequestedTask` (the audit also runs when a version is published, asked for by no one).
"""

from contextlib import contextmanager

from django.conf import settings
from django.db import models
from django.utils import timezone

from config.task_retry import TRANSIENT_ERRORS


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


@contextmanager
def failure_recorded(rows):
    """Around a task's work on its row(s): a failure is written on the row, then raised.

    A transient error (a lost database or broker connection) is raised as it is: the task
    retries it, and the row stays running until then.
    """
    try:
        yield
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"[:2000]
        rows.update(status=TaskStatus.FAILED, message=message, finished_at=timezone.now())
        raise


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
