"""Live triage: items flagged by the pipeline for an analyst to decide."""

from django.conf import settings
from django.db import models


class TriageStatus(models.TextChoices):
    OPEN = "open"
    CLAIMED = "claimed"
    RESOLVED = "resolved"


class TriageItem(models.Model):
    query = models.OneToOneField("labelling.Query", on_delete=models.CASCADE, related_name="triage_item")
    flagged_because = models.TextField(blank=True)
    priority = models.IntegerField(default=0)
    status = models.CharField(max_length=16, choices=TriageStatus.choices, default=TriageStatus.OPEN)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    claimed_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=32, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-priority", "created_at"]

    def __str__(self):
        return f"triage {self.pk} ({self.status})"
