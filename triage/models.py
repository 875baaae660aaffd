"""Live triage: ingested queries, the policy that judges them, the analyst queue, alerts.

A live query is a `labelling.Query` (source `live`) plus a `LiveQuery` row that carries its
pipeline state. The pipeline may flag it into a `TriageItem` for an analyst, send a copy
to the labelling queue as an `audit` query, or leave it passed. Nothing is ever dropped:
a query whose judges all errored is `unjudged`, shown in its own list.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from judges.metrics import k_of_n_problem

# Defined beside their code; imported here so Django loads them as the triage app's models.
from triage.alert_models import Alert, AlertDelivery, AlertRecipient, Webhook  # noqa: F401
from triage.monitor_models import MonitorPass  # noqa: F401
from triage.otlp_models import OtlpExportCounts, OtlpHeldSpan, OtlpMapping  # noqa: F401
from triage.token_models import TOKEN_SCOPES, ApiToken, validate_scopes  # noqa: F401


class FlagRule(models.TextChoices):
    ANY = "any", "Any judge rejects"
    MAJORITY = "majority", "A majority of answering judges reject"
    K_OF_N = "k_of_n", "At least k judges reject"
    VERIFIER_ONLY = "verifier_only", "Only the deterministic verifier flags"


class AuditScope(models.TextChoices):
    ACCEPTED = "accepted", "Accepted queries only"
    # A uniform sample of every live query, flagged or not: what prediction-powered inference needs.
    ALL = "all", "All live queries"


class TriagePolicy(models.Model):
    """One immutable version of the live triage policy; the highest version is in force."""

    version = models.PositiveIntegerField()
    judge_versions = models.ManyToManyField("judges.JudgeVersion", blank=True, related_name="triage_policies")
    flag_rule = models.CharField(max_length=16, choices=FlagRule.choices, default=FlagRule.ANY)
    k = models.PositiveSmallIntegerField(default=1, help_text="For k-of-n: how many rejects flag a query.")
    run_verifier = models.BooleanField(default=True)
    flag_on_verifier_failure = models.BooleanField(default=True)
    run_fanout_detector = models.BooleanField(default=True)
    audit_share = models.FloatField(default=0.05, help_text="Share of unflagged queries sent to labelling.")
    audit_scope = models.CharField(
        max_length=8,
        choices=AuditScope.choices,
        default=AuditScope.ACCEPTED,
        help_text="Draw the audit sample from accepted queries only, or uniformly from all live queries.",
    )
    sla_minutes = models.PositiveIntegerField(default=240)
    # The queue-age alert: raised when the oldest open item has waited longer than this.
    queue_alert_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Alert when the queue's oldest open item is older than this (empty: no alert)."
    )
    claim_timeout_minutes = models.PositiveIntegerField(default=15)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-version"]
        verbose_name_plural = "triage policies"
        constraints = [
            # Results name the policy version that produced them: a number means one policy.
            models.UniqueConstraint(fields=["version"], name="triage_triagepolicy_unique_version"),
            models.CheckConstraint(
                condition=Q(audit_share__gte=0) & Q(audit_share__lte=1),
                name="triage_triagepolicy_audit_share_is_share",
            ),
            models.CheckConstraint(condition=Q(k__gte=1), name="triage_triagepolicy_k_positive"),
        ]

    def __str__(self):
        return f"policy v{self.version}"

    # The number of judges the policy is about to be saved with: a many-to-many is written
    # after the row, so the publisher and the admin form say it here for clean() to check.
    pending_judge_count: int | None = None

    def clean(self):
        super().clean()
        count = self.pending_judge_count
        if count is None and self.pk:
            count = self.judge_versions.count()
        if count is not None:
            self.k_check(judge_count=count)

    def k_check(self, *, judge_count: int) -> None:
        """Refuse a k-of-n rule its judges could never reach, on the `k` field (the ensembles' check)."""
        problem = k_of_n_problem(self.k, judge_count) if self.flag_rule == FlagRule.K_OF_N else None
        if problem:
            raise ValidationError({"k": f"{problem}."})


class IngestStatus(models.TextChoices):
    PENDING = "pending"  # stored; the pipeline has not finished with it
    PROCESSING = "processing"
    FLAGGED = "flagged"  # a TriageItem exists
    PASSED = "passed"
    UNJUDGED = "unjudged"  # every judge errored and nothing else flagged it
    FAILED = "failed"  # the pipeline itself failed TRIAGE_MAX_ATTEMPTS times; a person may requeue it


class LiveQuery(models.Model):
    """The pipeline state of one ingested query (same id as its `labelling.Query`)."""

    query = models.OneToOneField("labelling.Query", primary_key=True, on_delete=models.CASCADE, related_name="live")
    api_token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL)
    client = models.SlugField(max_length=64, blank=True)
    # The client's own id for the query (a copy of query.external_id); null for a live row
    # not made by ingestion. Unique per client: two clients may use the same ids.
    external_id = models.CharField(max_length=200, null=True, blank=True)
    status = models.CharField(max_length=16, choices=IngestStatus.choices, default=IngestStatus.PENDING)
    policy = models.ForeignKey(TriagePolicy, null=True, blank=True, on_delete=models.PROTECT)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    enqueue_attempts = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The claim of the task processing it (its Celery task id, which a retry keeps): the
    # task's own retry re-enters, any other delivery finds it taken (triage/claims.py).
    claim_token = models.CharField(max_length=64, blank=True, editable=False)
    # Pipeline runs started; after TRIAGE_MAX_ATTEMPTS the query is `failed`, with its last error.
    pipeline_attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    verifier_result = models.JSONField(default=dict, blank=True)
    decision = models.JSONField(default=dict, blank=True)
    result_preview = models.JSONField(default=dict, blank=True)
    # The copy sent to the labelling queue when this query was drawn for the audit sample.
    audit_query = models.OneToOneField(
        "labelling.Query", null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_of"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "live queries"
        ordering = ["-created_at"]
        indexes = [
            # The sweeper looks for pending rows by age; the dashboard counts by status.
            models.Index(fields=["status", "created_at"], name="triage_livequery_status_age"),
        ]
        constraints = [
            # Ingestion is idempotent on external_id within one client, never across clients:
            # client B re-posting client A's id gets a query of its own.
            models.UniqueConstraint(
                fields=["client", "external_id"], name="triage_livequery_unique_client_external_id"
            ),
        ]

    def __str__(self):
        return f"live {self.query_id} ({self.status})"


class TriageProbe(models.Model):
    """A probe the pipeline ran for a live query: for a judge's hypothesis or the detector."""

    live_query = models.ForeignKey(LiveQuery, on_delete=models.CASCADE, related_name="probes")
    # "fanout_detector" or "judge:<judge version id>:<hypothesis index>".
    source = models.CharField(max_length=64)
    verdict = models.ForeignKey("judges.Verdict", null=True, blank=True, on_delete=models.SET_NULL)
    probe_run = models.ForeignKey("probes.ProbeRun", on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["id"]
        constraints = [
            # A redelivered pipeline task must not run (or store) the same probe twice.
            models.UniqueConstraint(fields=["live_query", "source"], name="triage_triageprobe_one_per_source"),
        ]

    def __str__(self):
        return f"{self.source} on {self.live_query_id}"


class TriageStatus(models.TextChoices):
    OPEN = "open"
    CLAIMED = "claimed"
    RESOLVED = "resolved"


class Resolution(models.TextChoices):
    CONFIRMED_WRONG = "confirmed_wrong", "Confirmed wrong"
    FALSE_ALARM = "false_alarm", "False alarm"
    UNCLEAR = "unclear", "Unclear"


class TriageItem(models.Model):
    query = models.OneToOneField("labelling.Query", on_delete=models.CASCADE, related_name="triage_item")
    flagged_because = models.TextField(blank=True)
    priority = models.IntegerField(default=0)
    policy = models.ForeignKey(TriagePolicy, null=True, blank=True, on_delete=models.PROTECT)
    probe_confirmed = models.BooleanField(default=False)
    verifier_failed = models.BooleanField(default=False)
    judges_agreeing = models.PositiveSmallIntegerField(default=0)
    judges_answered = models.PositiveSmallIntegerField(default=0)
    error_class_guess = models.CharField(max_length=32, blank=True)
    # Judge versions that rejected this query, for per-judge precision and the filter.
    rejecting_judges = models.ManyToManyField("judges.JudgeVersion", blank=True, related_name="+")
    status = models.CharField(max_length=16, choices=TriageStatus.choices, default=TriageStatus.OPEN)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=32, blank=True, choices=Resolution.choices)
    resolution_error_class = models.CharField(max_length=32, blank=True)
    resolution_note = models.TextField(blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    label = models.ForeignKey("labelling.Label", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    time_spent_s = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Probe-confirmed first, then how many judges agree, then oldest first.
        ordering = ["-probe_confirmed", "-judges_agreeing", "created_at"]
        indexes = [
            models.Index(
                fields=["status", "-probe_confirmed", "-judges_agreeing", "created_at"], name="triage_item_queue_order"
            ),
        ]
        constraints = [
            # A claimed item always names who holds it; an open one names nobody.
            models.CheckConstraint(
                condition=~Q(status="claimed") | Q(assignee__isnull=False, claim_expires_at__isnull=False),
                name="triage_triageitem_claim_has_assignee",
            ),
            # Resolved exactly when a resolution is recorded.
            models.CheckConstraint(
                condition=(Q(status="resolved") & ~Q(resolution="")) | (~Q(status="resolved") & Q(resolution="")),
                name="triage_triageitem_resolution_iff_resolved",
            ),
        ]

    def __str__(self):
        return f"triage {self.pk} ({self.status})"


class ResolutionEvent(models.Model):
    """History of an item's decisions: every resolve and every admin reopen."""

    class Action(models.TextChoices):
        RESOLVED = "resolved"
        REOPENED = "reopened"

    item = models.ForeignKey(TriageItem, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=16, choices=Action.choices)
    resolution = models.CharField(max_length=32, blank=True)
    error_class = models.CharField(max_length=32, blank=True)
    note = models.TextField(blank=True)
    label = models.ForeignKey("labelling.Label", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"{self.action} {self.item_id} {self.resolution}"


class EstimateSnapshotManager(models.Manager):
    def store_for_hour(self, *, judge_version, **fields) -> "EstimateSnapshot":
        """Store a monitoring pass's estimates for one judge, once per hour.

        A retried or redelivered `monitor_judges` (or "monitor now" pressed again) in the
        same hour replaces that hour's snapshot instead of adding a second one.
        """
        now = timezone.now()
        snapshot, _ = self.update_or_create(
            judge_version=judge_version,
            hour=now.replace(minute=0, second=0, microsecond=0),
            defaults={**fields, "computed_at": now},
        )
        return snapshot


class EstimateSnapshot(models.Model):
    """One monitoring pass for one live judge: its live rates and the error-rate estimates."""

    judge_version = models.ForeignKey("judges.JudgeVersion", on_delete=models.CASCADE, related_name="+")
    policy = models.ForeignKey(TriagePolicy, null=True, blank=True, on_delete=models.SET_NULL)
    computed_at = models.DateTimeField(auto_now_add=True)
    # The hour of the pass (computed_at truncated): one snapshot per judge and hour. Null
    # only on snapshots stored before the key existed that shared an hour with a later one.
    hour = models.DateTimeField(null=True, blank=True, editable=False)
    window_start = models.DateTimeField(null=True, blank=True)
    live_queries = models.PositiveIntegerField(default=0)
    flag_rate = models.FloatField(null=True, blank=True)
    calibrated_catch_rate = models.FloatField(null=True, blank=True)
    calibrated_false_reject_rate = models.FloatField(null=True, blank=True)
    live_catch_rate = models.FloatField(null=True, blank=True)
    live_false_reject_rate = models.FloatField(null=True, blank=True)
    labelled = models.PositiveIntegerField(default=0)
    corrected_error_rate = models.FloatField(null=True, blank=True)
    corrected_low = models.FloatField(null=True, blank=True)
    corrected_high = models.FloatField(null=True, blank=True)
    audit_error_rate = models.FloatField(null=True, blank=True)
    audit_low = models.FloatField(null=True, blank=True)
    audit_high = models.FloatField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)

    objects = EstimateSnapshotManager()

    class Meta:
        ordering = ["-computed_at"]
        constraints = [
            # A retried monitoring pass must not store its estimates twice.
            models.UniqueConstraint(fields=["judge_version", "hour"], name="triage_estimatesnapshot_one_per_hour"),
        ]

    def __str__(self):
        return f"estimate {self.judge_version_id} @ {self.computed_at:%Y-%m-%d %H:%M}"


class AttemptFailureClass(models.TextChoices):
    """Seed 001's failure taxonomy; an attempt that passed records none ("")."""

    SYNTAX = "syntax"
    DIALECT = "dialect"
    UNKNOWN_OBJ = "unknown_obj"
    EMPTY_RESULT = "empty_result"
    TIMEOUT = "timeout"
    TRANSPORT = "transport"
