"""The loop lab's records: the generation attempts a live request made before its SQL was posted.

Triage's ingestion API takes the attempts with each live query and validates them
(`triage/attempts.py`); it cannot import this app, so it hands them to the store this app
registers at start-up (`loops/apps.py`, `loops/attempts.py` `request_attempts_bulk_store`).
"""

from django.db import models
from django.db.models import Q

from triage.models import AttemptFailureClass, LiveQuery


class RequestAttempt(models.Model):
    """One generation attempt a live request made before its SQL was posted (the loop lab's record).

    A request's attempts are ordered by `position`; `attempt` counts from 1 within a tier,
    as the replay file does. Tokens or cost (or both) say what the attempt spent.
    """

    live_query = models.ForeignKey(LiveQuery, on_delete=models.CASCADE, related_name="attempts")
    position = models.PositiveSmallIntegerField()
    tier = models.SlugField(max_length=32)
    attempt = models.PositiveSmallIntegerField()
    failure_class = models.CharField(max_length=16, choices=AttemptFailureClass.choices, blank=True)
    tokens = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=8, null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table, its constraints and its index keep the names they had in triage, where the
        # model lived until migration loops/0001: moving it renamed nothing in the database.
        db_table = "triage_requestattempt"
        ordering = ["live_query", "position"]
        constraints = [
            # Re-posting or re-importing a request must not record its attempts twice.
            models.UniqueConstraint(fields=["live_query", "position"], name="triage_requestattempt_one_per_position"),
            models.UniqueConstraint(
                fields=["live_query", "tier", "attempt"], name="triage_requestattempt_one_per_tier_attempt"
            ),
            models.CheckConstraint(
                condition=Q(position__gte=1) & Q(attempt__gte=1), name="triage_requestattempt_counts_from_one"
            ),
            models.CheckConstraint(
                condition=Q(latency_ms__isnull=True) | Q(latency_ms__gte=0),
                name="triage_requestattempt_latency_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(cost_usd__isnull=True) | Q(cost_usd__gte=0), name="triage_requestattempt_cost_not_negative"
            ),
        ]
        indexes = [
            # `replay_policy --live SINCE` and the triage dashboard read the last days' attempts.
            models.Index(fields=["created_at"], name="triage_requestattempt_created"),
        ]

    def __str__(self):
        return f"{self.live_query_id} #{self.position} {self.tier}/{self.attempt} {self.failure_class or 'passed'}"
