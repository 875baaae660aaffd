"""Queries, gold sets and their immutable versions, labels and adjudications."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class ErrorClass(models.TextChoices):
    """The one list of error classes that labels and judges share (DESIGN.md)."""

    UNKNOWN_OBJECT = "unknown_object", "Unknown object"
    JOIN_FANOUT = "join_fanout", "Join fan-out"
    MISREAD_INTENT = "misread_intent", "Misread intent"
    AGGREGATION_GRAIN = "aggregation_grain", "Aggregation grain"
    MISSING_FILTER = "missing_filter", "Missing filter"
    DROPPED_ROWS = "dropped_rows", "Dropped rows"
    WRONG_MEASURE = "wrong_measure", "Wrong measure"
    SYNTAX = "syntax", "Syntax"
    DIALECT = "dialect", "Dialect"
    OTHER = "other", "Other"


class QuerySource(models.TextChoices):
    GOLD = "gold"
    LIVE = "live"
    AUDIT = "audit"


class GoldSet(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    description = models.TextField(blank=True)
    # Share of items that get a second labeller, for agreement measurement.
    overlap_share = models.FloatField(default=0.2)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(overlap_share__gte=0) & Q(overlap_share__lte=1),
                name="labelling_goldset_overlap_is_share",
            )
        ]

    def __str__(self):
        return self.name


class Query(models.Model):
    """A question and the SQL an LLM wrote for it, from a gold set or from live traffic."""

    question = models.TextField()
    sql = models.TextField()
    dialect = models.CharField(max_length=16, default="sqlite")
    warehouse = models.ForeignKey("probes.Warehouse", null=True, blank=True, on_delete=models.PROTECT)
    source = models.CharField(max_length=8, choices=QuerySource.choices, default=QuerySource.GOLD)
    gold_set = models.ForeignKey(GoldSet, null=True, blank=True, on_delete=models.CASCADE, related_name="queries")
    external_id = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64, db_index=True, blank=True)
    # Correct SQL for the same question, when known: drives the execution-backed suggestion.
    reference_sql = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "queries"
        constraints = [
            # A gold item id is unique inside its gold set.
            models.UniqueConstraint(
                fields=["gold_set", "external_id"],
                condition=Q(gold_set__isnull=False),
                name="labelling_query_unique_gold_item",
            ),
            # Live ingestion is idempotent on external_id.
            models.UniqueConstraint(
                fields=["source", "external_id"],
                condition=Q(gold_set__isnull=True),
                name="labelling_query_unique_live_external_id",
            ),
        ]

    def __str__(self):
        return f"{self.external_id}: {self.question[:60]}"


class LabelDecision(models.TextChoices):
    CORRECT = "correct"
    WRONG = "wrong"
    UNSURE = "unsure"


class LabelSource(models.TextChoices):
    MANUAL = "manual"
    IMPORT = "import"
    TRIAGE = "triage"
    AUDIT = "audit"
    ADJUDICATION = "adjudication"


class Label(models.Model):
    """One labeller's judgement of one query. A change supersedes; history is kept."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="labels")
    labeller = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    decision = models.CharField(max_length=8, choices=LabelDecision.choices)
    error_class = models.CharField(max_length=32, choices=ErrorClass.choices, blank=True)
    note = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=LabelSource.choices, default=LabelSource.MANUAL)
    is_current = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A labeller has at most one current label per query; older ones are history.
            models.UniqueConstraint(
                fields=["query", "labeller"],
                condition=Q(is_current=True, labeller__isnull=False),
                name="labelling_label_one_current_per_labeller",
            ),
            # A wrong label must say how it is wrong; other labels carry no class.
            models.CheckConstraint(
                condition=(Q(decision="wrong") & ~Q(error_class="")) | (~Q(decision="wrong") & Q(error_class="")),
                name="labelling_label_error_class_iff_wrong",
            ),
        ]

    def __str__(self):
        return f"{self.query_id} {self.decision} {self.error_class}".strip()


class GoldSetVersion(models.Model):
    """An immutable, published snapshot of a gold set's (query, final label) pairs."""

    gold_set = models.ForeignKey(GoldSet, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    published_at = models.DateTimeField(auto_now_add=True)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["gold_set", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["gold_set", "number"], name="labelling_goldsetversion_unique_number"),
        ]

    def __str__(self):
        return f"{self.gold_set} v{self.number}"


class GoldSetVersionItem(models.Model):
    """One frozen (query, final label, error class) row of a published version."""

    version = models.ForeignKey(GoldSetVersion, on_delete=models.CASCADE, related_name="items")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="version_items")
    decision = models.CharField(max_length=8, choices=LabelDecision.choices)
    error_class = models.CharField(max_length=32, choices=ErrorClass.choices, blank=True)

    class Meta:
        ordering = ["version", "query"]
        constraints = [
            models.UniqueConstraint(fields=["version", "query"], name="labelling_versionitem_unique_query"),
        ]

    def __str__(self):
        return f"{self.version} {self.query_id} {self.decision}"
