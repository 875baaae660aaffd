"""Error taxonomies as data: named, versioned lists of classes, each optionally under a category.

A gold set uses one taxonomy (Docket's default, seeded by migration 0010, unless it names its
own). Every change to a taxonomy — classes added, renamed, retired, a name mapped — makes a
new `TaxonomyVersion`, a frozen snapshot of its classes; a published gold-set version records
the snapshot it was published under. Classes are never deleted: a retired class stays valid
for the labels that use it and is no longer offered. `TaxonomyAlias` keeps the other names a
class answers to: its old names after a rename, and the classes Docket's own checkers emit
(the verifier's `unknown_object`, a judge's guess) that the taxonomy maps onto it (`maps_to`).
"""

from django.db import models
from django.db.models import Q

from labelling.error_classes import CLASS_NAME_MAX_LENGTH, SEPARATOR

DEFAULT_TAXONOMY = "docket"


class Taxonomy(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    description = models.TextField(blank=True)
    # The number of its latest TaxonomyVersion, bumped by every change (labelling/taxonomy.py).
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "taxonomies"

    def __str__(self):
        return f"{self.name} v{self.version}"


class TaxonomyClass(models.Model):
    """One error class of a taxonomy; `category` is its first level (blank: none)."""

    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.CASCADE, related_name="classes")
    name = models.CharField(max_length=CLASS_NAME_MAX_LENGTH)
    category = models.CharField(max_length=CLASS_NAME_MAX_LENGTH, blank=True)
    description = models.TextField(blank=True)
    # The order of the file it came from: the labelling queue's keys follow it.
    position = models.PositiveIntegerField(default=0)
    retired = models.BooleanField(default=False)

    class Meta:
        ordering = ["taxonomy", "position", "id"]
        verbose_name_plural = "taxonomy classes"
        constraints = [
            # A name means one class of its taxonomy (aliases are checked against names by the service).
            models.UniqueConstraint(fields=["taxonomy", "name"], name="labelling_taxonomyclass_unique_name"),
            # Several classes of a label are stored joined by the separator: no name may hold it.
            models.CheckConstraint(
                condition=~Q(name="") & ~Q(name__contains=SEPARATOR), name="labelling_taxonomyclass_name_storable"
            ),
        ]

    def __str__(self):
        return f"{self.category} / {self.name}" if self.category else self.name


class TaxonomyAlias(models.Model):
    """Another name of a class: an old name kept by a rename, or a checker's class it maps (`maps_to`)."""

    class Kind(models.TextChoices):
        RENAMED = "renamed"
        MAPS_TO = "maps_to"

    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.CASCADE, related_name="aliases")
    name = models.CharField(max_length=CLASS_NAME_MAX_LENGTH)
    target = models.ForeignKey(TaxonomyClass, on_delete=models.PROTECT, related_name="aliases")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["taxonomy", "name"]
        verbose_name_plural = "taxonomy aliases"
        constraints = [
            # One name maps to one class within a taxonomy.
            models.UniqueConstraint(fields=["taxonomy", "name"], name="labelling_taxonomyalias_unique_name"),
        ]

    def __str__(self):
        return f"{self.name} → {self.target.name}"


class TaxonomyVersion(models.Model):
    """A frozen snapshot of a taxonomy's classes, written by every change to it."""

    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    # [{"id", "class", "category", "description", "retired"}] in position order.
    classes = models.JSONField(default=list)
    # {other name: class}: renamed classes' old names and the checkers' classes mapped.
    aliases = models.JSONField(default=dict)
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["taxonomy", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["taxonomy", "number"], name="labelling_taxonomyversion_unique_number"),
        ]

    def __str__(self):
        return f"{self.taxonomy.name} v{self.number}"
