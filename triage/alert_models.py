"""Alerts and where they go: the stored alert, the webhooks and e-mail recipients, the delivery log.

An alert names its cause (`cause_key`, e.g. `queue_sla` or `catch_drift:judge_version:3`);
while an alert for a cause is unresolved (open or acknowledged) the same cause raises and
sends nothing new, and the database holds that as a constraint.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class Alert(models.Model):
    """Something a person should look at: a judge drifted, the queue is late, live queries or a run failed."""

    class Kind(models.TextChoices):
        CATCH_DRIFT = "catch_drift", "Catch rate left its calibration interval"
        FALSE_REJECT_DRIFT = "false_reject_drift", "False-reject rate left its calibration interval"
        MODEL_CHANGED = "model_changed", "Vendor-reported model id changed"
        QUEUE_SLA = "queue_sla", "The queue's oldest item is past the policy's SLA"
        LIVE_FAILED = "live_failed", "Live queries failed in the pipeline"
        CALIBRATION_FAILED = "calibration_failed", "A calibration run failed"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    # What raised it; one unresolved alert per cause. Empty on alerts stored before causes existed.
    cause_key = models.CharField(max_length=200, blank=True, default="")
    judge_version = models.ForeignKey("judges.JudgeVersion", null=True, blank=True, on_delete=models.CASCADE)
    message = models.TextField()
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set by the check that no longer finds the cause, or by an admin.
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A cause is alerted (and sent) once until it is resolved, even with two checks racing.
            models.UniqueConstraint(
                fields=["cause_key"],
                condition=Q(resolved_at__isnull=True) & ~Q(cause_key=""),
                name="triage_alert_one_unresolved_per_cause",
            ),
        ]
        indexes = [
            # The alerts page and every check read the unresolved alerts.
            models.Index(fields=["resolved_at", "cause_key"], name="triage_alert_unresolved_cause"),
        ]

    def __str__(self):
        return self.message

    @property
    def state(self) -> str:
        if self.resolved_at:
            return "resolved"
        return "acknowledged" if self.acknowledged_at else "open"


class Webhook(models.Model):
    """An address alerts are POSTed to, signed with a secret derived from the environment's key.

    The database keeps `secret_salt`, which is not a secret: the signing secret is
    HMAC(ALERT_WEBHOOK_KEY, salt) (triage/webhooks.py), so a copy of the database alone
    cannot sign a payload, and `add_webhook` prints the secret once.
    """

    class Kind(models.TextChoices):
        JSON = "json", "Generic JSON (signed)"
        SLACK = "slack", "Slack-compatible"

    url = models.URLField(max_length=500)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.JSON)
    secret_salt = models.CharField(max_length=64, editable=False)
    is_active = models.BooleanField(default=True)
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            # The salt is what a secret is derived from: two webhooks never share one.
            models.UniqueConstraint(fields=["secret_salt"], name="triage_webhook_unique_salt"),
        ]

    def __str__(self):
        return f"{self.kind} webhook {self.url}"


class AlertRecipient(models.Model):
    """A user an admin chose to receive alerts by e-mail (at the user's address)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"alert e-mail to {self.user}"


class AlertDelivery(models.Model):
    """One alert to one webhook or one e-mail address: the delivery log."""

    class Status(models.TextChoices):
        PENDING = "pending"  # waiting for (another) try
        SENT = "sent"
        FAILED = "failed"  # gave up after the retries, or refused for good (e.g. a 4xx)

    class Channel(models.TextChoices):
        JSON = "json"
        SLACK = "slack"
        EMAIL = "email"

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=8, choices=Channel.choices)
    # The webhook (null once an admin deleted it; `destination` still says where it went) or the address.
    webhook = models.ForeignKey(Webhook, null=True, blank=True, on_delete=models.SET_NULL)
    email = models.EmailField(blank=True)
    destination = models.CharField(max_length=500)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_tried_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "alert deliveries"
        constraints = [
            # A check that runs twice must not send one alert to one place twice.
            models.UniqueConstraint(
                fields=["alert", "webhook"],
                condition=Q(webhook__isnull=False),
                name="triage_alertdelivery_once_per_hook",
            ),
            models.UniqueConstraint(
                fields=["alert", "email"], condition=~Q(email=""), name="triage_alertdelivery_once_per_email"
            ),
        ]

    def __str__(self):
        return f"alert {self.alert_id} → {self.webhook or self.email} ({self.status})"
