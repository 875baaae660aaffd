"""Worked examples a judge version carries in its prompt: gold items of a dev split.

Its own module because `judges.models` is near the size limit; `judges.models` imports it so
Django finds the model. `judges.examples` adds examples (refusing test items) and reads them.
"""

from django.db import models

from labelling.error_classes import ERROR_CLASSES_MAX_LENGTH


class JudgeVersionExample(models.Model):
    """One gold item shown to a judge version as a worked example, with its gold label and class.

    The label and class are copied from the gold-set version the example was taken from, so
    the prompt says what the item's gold label was when it was chosen.
    """

    judge_version = models.ForeignKey("judges.JudgeVersion", on_delete=models.CASCADE, related_name="examples")
    query = models.ForeignKey("labelling.Query", on_delete=models.PROTECT, related_name="judge_examples")
    # The gold-set version (and so the split) it was taken from.
    gold_set_version = models.ForeignKey("labelling.GoldSetVersion", on_delete=models.PROTECT, related_name="+")
    decision = models.CharField(max_length=8)
    error_class = models.CharField(max_length=ERROR_CLASSES_MAX_LENGTH, blank=True)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge_version", "position", "id"]
        constraints = [
            # An item is one example of a version, never two.
            models.UniqueConstraint(fields=["judge_version", "query"], name="judges_judgeversionexample_once"),
        ]

    def __str__(self):
        return f"{self.judge_version_id} example {self.query_id}"
