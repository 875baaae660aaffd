"""A row that a background task advances, for a page's progress bar: one status vocabulary, one percent.

The catalogue refresh (probes), the gold-set audit (labelling) and the monitoring pass (triage)
are each queued by a page, run by a task, and shown with `templates/_progress_bar.html`.
"""

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
