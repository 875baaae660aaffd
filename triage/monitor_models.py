"""A monitoring pass asked for in the browser ("Compute it now"): its task's progress, judge by judge."""

from django.conf import settings
from django.db import models

from config.progress import TaskProgress, TaskStatus


class MonitorPass(TaskProgress, models.Model):
    """One "monitor now": queued, running (judges_done of judges_total), then done or failed."""

    status = models.CharField(max_length=8, choices=TaskStatus.choices, default=TaskStatus.QUEUED)
    judges_total = models.PositiveIntegerField(default=0)
    judges_done = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)  # the outcome, in words: estimates stored, or why it failed
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"monitoring pass {self.pk}: {self.status}"

    def progress_counts(self) -> tuple[int, int]:
        return self.judges_done, self.judges_total
