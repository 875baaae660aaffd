"""RequestAttempt, moved here from triage (triage/0011_request_attempt_moves_to_loops): its table is kept as it was."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("triage", "0011_request_attempt_moves_to_loops"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The table exists (triage/0003_request_attempts made it, with its rows): state only.
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="RequestAttempt",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("position", models.PositiveSmallIntegerField()),
                        ("tier", models.SlugField(max_length=32)),
                        ("attempt", models.PositiveSmallIntegerField()),
                        (
                            "failure_class",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("syntax", "Syntax"),
                                    ("dialect", "Dialect"),
                                    ("unknown_obj", "Unknown Obj"),
                                    ("empty_result", "Empty Result"),
                                    ("timeout", "Timeout"),
                                    ("transport", "Transport"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("tokens", models.PositiveIntegerField(blank=True, null=True)),
                        ("cost_usd", models.DecimalField(blank=True, decimal_places=8, max_digits=12, null=True)),
                        ("latency_ms", models.FloatField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "live_query",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="attempts",
                                to="triage.livequery",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "triage_requestattempt",
                        "ordering": ["live_query", "position"],
                        "indexes": [models.Index(fields=["created_at"], name="triage_requestattempt_created")],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("live_query", "position"), name="triage_requestattempt_one_per_position"
                            ),
                            models.UniqueConstraint(
                                fields=("live_query", "tier", "attempt"),
                                name="triage_requestattempt_one_per_tier_attempt",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("position__gte", 1), ("attempt__gte", 1)),
                                name="triage_requestattempt_counts_from_one",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("latency_ms__isnull", True), ("latency_ms__gte", 0), _connector="OR"
                                ),
                                name="triage_requestattempt_latency_not_negative",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("cost_usd__isnull", True), ("cost_usd__gte", 0), _connector="OR"),
                                name="triage_requestattempt_cost_not_negative",
                            ),
                        ],
                    },
                ),
            ],
        ),
    ]
