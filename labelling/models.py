"""Queries, gold sets and their immutable versions, labels and adjudications."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from labelling.audit_models import GoldSetAudit  # noqa: F401 — models of this app
from labelling.error_classes import (
    ERROR_CLASSES_MAX_LENGTH,
    UNCLASSIFIED,
    ErrorClassRuleMixin,
    error_class_rule_constraint,
)
from labelling.immutability import FrozenItemQuerySet, FrozenVersionQuerySet, ImmutableVersionError
from labelling.split_models import GoldSetSplit, GoldSetSplitItem  # noqa: F401 — models of this app
from labelling.taxonomy_models import Taxonomy, TaxonomyVersion


class ErrorClass(models.TextChoices):
    """Docket's own error classes: its default taxonomy (seeded by migration 0010) and what its checkers emit.

    A gold set may use a taxonomy of its own (`labelling.taxonomy_models`); labels store class
    names as text (`labelling.error_classes`), so this list is no field's choices.
    """

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


# Docket's classes and `unclassified` (a wrong label whose source says only "wrong").
LABEL_ERROR_CLASSES = [*ErrorClass.choices, (UNCLASSIFIED, "Unclassified")]
FINAL = ["correct", "wrong"]  # the decisions that settle an item


class ResolutionPolicy(models.TextChoices):
    """How publishing turns an item's labels into its final label."""

    # The adjudication, else the label every decisive labeller agrees on.
    MANUAL = "manual"
    # The adjudication, else a strict majority of the item's labellers (ties are left out).
    MAJORITY = "majority"
    # Only items whose labellers all agree; adjudicated disagreements are left out too.
    UNANIMOUS_ONLY = "unanimous-only"


class QuerySource(models.TextChoices):
    GOLD = "gold"
    LIVE = "live"
    AUDIT = "audit"


class QueryOrigin(models.TextChoices):
    """Where a gold item came from: written by a person or a model, or seeded by a mutation operator."""

    ORGANIC = "organic"
    MUTATED = "mutated"


class GoldSet(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    description = models.TextField(blank=True)
    # Share of items that get a second labeller, for agreement measurement.
    overlap_share = models.FloatField(default=0.2)
    # Double labelling is blind: a labeller sees the other labels of an item (and who gave
    # them) only after labelling it, and only where an admin allows it here.
    reveal_labels_after_labelling = models.BooleanField(
        default=False,
        help_text="Show a labeller the other labels of an item (with their labellers) once they have labelled it.",
    )
    # The error classes its labels use; None: Docket's default taxonomy (labelling.taxonomy).
    taxonomy = models.ForeignKey(Taxonomy, null=True, blank=True, on_delete=models.PROTECT, related_name="gold_sets")
    # The fitness thresholds its judges are held to (judges.fitness): gate when catch's Wilson lower
    # bound and false-reject's upper bound clear the first two, else monitor when κ's lower bound does.
    fitness_gate_catch_lower = models.FloatField(default=0.8, verbose_name="gate: catch rate's lower bound at least")
    fitness_gate_false_reject_upper = models.FloatField(
        default=0.05, verbose_name="gate: false-reject rate's upper bound at most"
    )
    fitness_monitor_kappa_lower = models.FloatField(
        default=0.6, verbose_name="monitor: κ vs gold's lower bound at least"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(overlap_share__gte=0) & Q(overlap_share__lte=1),
                name="labelling_goldset_overlap_is_share",
            ),
            # Rates' bounds are shares and κ lies in [-1, 1]: a threshold outside could never be cleared, or always is.
            models.CheckConstraint(
                condition=Q(fitness_gate_catch_lower__gte=0)
                & Q(fitness_gate_catch_lower__lte=1)
                & Q(fitness_gate_false_reject_upper__gte=0)
                & Q(fitness_gate_false_reject_upper__lte=1)
                & Q(fitness_monitor_kappa_lower__gte=-1)
                & Q(fitness_monitor_kappa_lower__lte=1),
                name="labelling_goldset_fitness_thresholds_in_range",
            ),
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
    # Answer-free invariants a correct result must meet (labelling/invariants.py), written
    # by labellers on the item; the ladder's invariants rung checks candidates against them.
    # db_default: the gold importer inserts rows by raw SQL that omits the column (labelling/bulk.py).
    invariants = models.JSONField(default=dict, blank=True, db_default={})
    # A mutated item is a proposal (operator, suggested class, result diff in metadata["mutation"])
    # until a labeller labels it; the dashboard can split catch rates by origin.
    # db_default too: the bulk importers and triage's multi-row INSERT name their columns.
    origin = models.CharField(
        max_length=8, choices=QueryOrigin.choices, default=QueryOrigin.ORGANIC, db_default=QueryOrigin.ORGANIC
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Current labels on this query, kept by the label services: the queue reads it
    # instead of counting 200,000 labels on every "next item".
    label_count = models.PositiveIntegerField(default=0)
    # A stable draw in [0, 1) from the item's external id; the item gets a second
    # labeller when it falls under its gold set's overlap share.
    overlap_key = models.FloatField(default=1.0)
    wants_second_label = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "queries"
        indexes = [
            # The labelling queue: gold items still wanting a label, in id order.
            models.Index(
                fields=["gold_set", "id"],
                condition=Q(label_count=0) | Q(label_count=1, wants_second_label=True),
                name="labelling_query_queue_gold",
            ),
            # Audit samples still wanting their one label.
            models.Index(
                fields=["source", "id"],
                condition=Q(label_count=0, source="audit"),
                name="labelling_query_queue_audit",
            ),
        ]
        constraints = [
            # A gold item id is unique inside its gold set.
            models.UniqueConstraint(
                fields=["gold_set", "external_id"],
                condition=Q(gold_set__isnull=False),
                name="labelling_query_unique_gold_item",
            ),
            # Live external ids are unique per API client: triage.LiveQuery holds that constraint.
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


class Label(ErrorClassRuleMixin, models.Model):
    """One labeller's judgement of one query. A change supersedes; history is kept."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="labels")
    labeller = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    decision = models.CharField(max_length=8, choices=LabelDecision.choices)
    # One or more classes of the gold set's taxonomy, canonical "a;b" text (labelling.error_classes).
    error_class = models.CharField(max_length=ERROR_CLASSES_MAX_LENGTH, blank=True)
    note = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=LabelSource.choices, default=LabelSource.MANUAL)
    is_current = models.BooleanField(default=True)
    # Given before Docket showed its labeller anyone else's label of this query (no
    # LabelReveal); agreement counts only these. db_default: the gold importer inserts by raw SQL.
    blind = models.BooleanField(default=True, db_default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # The queue asks "which queries has this labeller labelled?" and "how many
            # current labellers does this query have?": both are served by this index.
            models.Index(fields=["labeller", "query"], name="labelling_label_by_labeller"),
            models.Index(fields=["query", "is_current"], name="labelling_label_current"),
        ]
        constraints = [
            # A labeller has at most one current label per query; older ones are history.
            models.UniqueConstraint(
                fields=["query", "labeller"],
                condition=Q(is_current=True, labeller__isnull=False),
                name="labelling_label_one_current_per_labeller",
            ),
            # A wrong label must say how it is wrong (one or more classes); other labels carry none.
            error_class_rule_constraint("labelling_label_error_class_iff_wrong"),
        ]

    def __str__(self):
        return f"{self.query_id} {self.decision} {self.error_class}".strip()


class LabelReveal(models.Model):
    """The first time Docket showed a user someone else's label of a query (a page or a download).

    Their labels of that query from then on are not blind (`Label.blind`).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_reveals")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="reveals")
    shown_on = models.CharField(max_length=32)  # the page or download that showed them
    revealed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["revealed_at", "id"]
        constraints = [
            # Only the first reveal matters: later ones change nothing, so they are not stored.
            models.UniqueConstraint(fields=["user", "query"], name="labelling_labelreveal_first_per_user_query"),
        ]

    def __str__(self):
        return f"{self.query_id} shown to {self.user_id} on {self.shown_on}"


class GoldSetVersion(models.Model):
    """An immutable, published snapshot of a gold set's (query, final label) pairs.

    `goldset_publish` creates the version, writes its items and then freezes it; from
    then on neither the row nor its items can change (model guards here, triggers in
    the database from migration 0002).
    """

    gold_set = models.ForeignKey(GoldSet, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    published_at = models.DateTimeField(auto_now_add=True)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    note = models.TextField(blank=True)
    # Set once, by goldset_publish, after the items are written.
    is_frozen = models.BooleanField(default=False)
    # Items left out because their labels disagree and nobody adjudicated them yet.
    unresolved_count = models.PositiveIntegerField(default=0)
    # Set with is_frozen (nullable so that adding them keeps SQLite's triggers on the table):
    # the resolution policy, how many items each rule decided or left out, and the items
    # left out as [{"id": external id, "reason": ...}].
    resolution = models.CharField(max_length=16, choices=ResolutionPolicy.choices, null=True, blank=True)
    resolution_counts = models.JSONField(null=True, blank=True)
    left_out = models.JSONField(null=True, blank=True)
    # The taxonomy snapshot its items' classes belong to (None: published before taxonomies were data).
    taxonomy_version = models.ForeignKey(
        TaxonomyVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="gold_set_versions"
    )

    objects = FrozenVersionQuerySet.as_manager()

    class Meta:
        ordering = ["gold_set", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["gold_set", "number"], name="labelling_goldsetversion_unique_number"),
        ]

    def __str__(self):
        return f"{self.gold_set} v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk and type(self).objects.filter(pk=self.pk, is_frozen=True).exists():
            raise ImmutableVersionError(f"{self} is published and cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self.is_frozen:
            raise ImmutableVersionError(f"{self} is published and cannot be deleted.")
        return super().delete(*args, **kwargs)

    @property
    def left_out_summary(self) -> str:
        """Say how many items were left out and why, e.g. "12 left out: 12 unresolved tie"."""
        reasons: dict[str, int] = {}
        for entry in self.left_out or []:
            reasons[entry["reason"]] = reasons.get(entry["reason"], 0) + 1
        if not reasons:
            return f"{self.unresolved_count} left out" if self.unresolved_count else "none left out"
        detail = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
        return f"{sum(reasons.values())} left out: {detail}"


class GoldSetVersionItem(ErrorClassRuleMixin, models.Model):
    """One frozen (query, final label, error class) row of a published version."""

    version = models.ForeignKey(GoldSetVersion, on_delete=models.CASCADE, related_name="items")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="version_items")
    decision = models.CharField(max_length=8, choices=LabelDecision.choices)
    # One or more classes of the gold set's taxonomy, canonical "a;b" text (labelling.error_classes).
    error_class = models.CharField(max_length=ERROR_CLASSES_MAX_LENGTH, blank=True)

    objects = FrozenItemQuerySet.as_manager()

    class Meta:
        ordering = ["version", "query"]
        constraints = [
            models.UniqueConstraint(fields=["version", "query"], name="labelling_versionitem_unique_query"),
            # The label rule holds for the frozen final labels too.
            error_class_rule_constraint("labelling_versionitem_error_class_iff_wrong"),
        ]

    def __str__(self):
        return f"{self.version} {self.query_id} {self.decision}"

    def save(self, *args, **kwargs):
        if GoldSetVersion.objects.filter(pk=self.version_id, is_frozen=True).exists():
            raise ImmutableVersionError("Items of a published gold set version cannot be added or changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if GoldSetVersion.objects.filter(pk=self.version_id, is_frozen=True).exists():
            raise ImmutableVersionError("Items of a published gold set version cannot be deleted.")
        return super().delete(*args, **kwargs)


class Adjudication(ErrorClassRuleMixin, models.Model):
    """An adjudicator's resolution of a query whose labellers disagree: who, what and why.

    The latest adjudication of a query is its final label, whatever the labels say.
    """

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="adjudications")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    decision = models.CharField(max_length=8, choices=LabelDecision.choices)
    # One or more classes of the gold set's taxonomy, canonical "a;b" text (labelling.error_classes).
    error_class = models.CharField(max_length=ERROR_CLASSES_MAX_LENGTH, blank=True)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # An adjudication settles the item: it must be correct or wrong, never unsure.
            models.CheckConstraint(condition=Q(decision__in=FINAL), name="labelling_adjudication_is_final"),
            # The label rule: wrong with one or more classes, correct with none.
            error_class_rule_constraint("labelling_adjudication_error_class_iff_wrong"),
            # Who resolved it must say why.
            models.CheckConstraint(condition=~Q(reason=""), name="labelling_adjudication_has_reason"),
        ]

    def __str__(self):
        return f"{self.query_id} adjudicated {self.decision} {self.error_class}".strip()
