"""A published gold-set version's dev/test split: recorded once, beside the frozen version.

The version itself is immutable (`labelling.immutability`), so its split lives in a table of
its own: one `GoldSetSplit` per version (a second split is refused by constraint: publish a new
version to split again), and one `GoldSetSplitItem` per correct or wrong item saying which part
it is in. `labelling.splits` computes and stores it.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class SplitPart(models.TextChoices):
    DEV = "dev"
    TEST = "test"


# What a report may ask for: one part, or every item.
SPLIT_ALL = "all"
SPLIT_CHOICES = (SplitPart.DEV.value, SplitPart.TEST.value, SPLIT_ALL)


class GoldSetSplit(models.Model):
    """The dev/test split of one published version, with the seed and share that made it."""

    version = models.OneToOneField("labelling.GoldSetVersion", on_delete=models.CASCADE, related_name="split")
    seed = models.BigIntegerField()
    test_share = models.FloatField()
    # {"dev": {...}, "test": {...}}: items, wrong, correct and wrong items per class (labelling.splits).
    counts = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        constraints = [
            # A share of 0 or 1 leaves one part empty: nothing to hold out, or nothing to tune on.
            models.CheckConstraint(
                condition=Q(test_share__gt=0) & Q(test_share__lt=1), name="labelling_goldsetsplit_share_between"
            ),
        ]

    def __str__(self):
        return f"split of {self.version} (seed {self.seed})"


class GoldSetSplitItem(models.Model):
    """Which part of its version's split one item is in."""

    split = models.ForeignKey(GoldSetSplit, on_delete=models.CASCADE, related_name="items")
    query = models.ForeignKey("labelling.Query", on_delete=models.PROTECT, related_name="split_items")
    part = models.CharField(max_length=4, choices=SplitPart.choices)

    class Meta:
        constraints = [
            # An item is in one part of a split, never both.
            models.UniqueConstraint(fields=["split", "query"], name="labelling_goldsetsplititem_one_part"),
        ]
        indexes = [models.Index(fields=["query", "part"], name="labelling_splititem_by_query")]

    def __str__(self):
        return f"{self.query_id} in {self.part}"
