"""A monitoring pass asked for in the browser ("Compute it now"): its task's progress, judge by judge."""

from django.db import models

from config.progress import RequestedTask, TaskStatus


class MonitorPass(RequestedTask):
    """One "monitor now": queued, running (judges_done of judges_total), then done or failed."""

    status = models.CharField(max_length=8, choices=TaskStatus.choices, default=TaskStatus.QUEUED)
    judges_total = models.PositiveIntegerField(default=0)
    judges_done = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"monitoring pass {self.pk}: {self.status}"

    def progress_counts(self) -> tuple[int, int]:
        return self.judges_done, self.judges_total
