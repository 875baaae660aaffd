"""A gold-set version's audits: each run of the audit is its own row, with its progress when it runs as a task."""

from django.db import models

from config.progress import TaskProgress, TaskStatus


class GoldSetAudit(TaskProgress, models.Model):
    """One run of `labelling.audit.goldset_audit` on a version: its findings, kept as run (not part of the
    frozen version: audited against a later catalogue it may find more or less, so each audit is its own row)."""

    version = models.ForeignKey("labelling.GoldSetVersion", on_delete=models.CASCADE, related_name="audits")
    created_at = models.DateTimeField(auto_now_add=True)
    items_checked = models.PositiveIntegerField(default=0)
    # {finding class: count} and [{"item", "class", "severity", "message", "evidence"}].
    counts = models.JSONField(default=dict, blank=True)
    findings = models.JSONField(default=list, blank=True)
    # The task that asked for it (its Celery id, kept by a redelivery); null when run in a request.
    request_id = models.CharField(max_length=64, null=True, blank=True, editable=False)
    # An audit asked for in the browser is a task: queued, running (items_done of items_total), done or failed.
    status = models.CharField(max_length=8, choices=TaskStatus.choices, default=TaskStatus.DONE)
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)  # why it failed
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # A redelivered audit task stores its audit once.
            models.UniqueConstraint(fields=["request_id"], name="labelling_goldsetaudit_one_per_request"),
        ]

    def __str__(self):
        return f"audit of {self.version_id} at {self.created_at:%Y-%m-%d %H:%M}"

    def progress_counts(self) -> tuple[int, int]:
        return self.items_done, self.items_total
