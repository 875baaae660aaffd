"""What the audit log records: the models whose every create, change and delete is kept.

Read by settings (`AUDITLOG_INCLUDE_TRACKING_MODELS`, django-auditlog registers them at
start-up), so this module is plain data and imports nothing of Django. To audit another
model, add one entry here (and, if its rows name who
made them, a line in `ACTOR_FIELDS`). Never list a field that holds a secret: exclude it.
"""

AUDITED_MODELS = [
    {"model": "judges.Judge"},
    {"model": "judges.JudgeVersion"},
    {"model": "triage.TriagePolicy", "m2m_fields": ["judge_versions"]},
    {"model": "probes.Warehouse"},  # a DSN is never in this table (probes/warehouses.py)
    # The hash stands for the token itself; last use changes every minute and says nothing.
    {"model": "triage.ApiToken", "exclude_fields": ["token_hash", "last_used_at"]},
    # Where alerts go; the salt is left out with the secret it stands for (triage/webhooks.py).
    {"model": "triage.Webhook", "exclude_fields": ["secret_salt"]},
    {"model": "triage.AlertRecipient"},
    # A gold set's fitness thresholds decide which judges may gate: who moved them, and from what.
    {
        "model": "labelling.GoldSet",
        "include_fields": [
            "fitness_gate_catch_lower",
            "fitness_gate_false_reject_upper",
            "fitness_monitor_kappa_lower",
        ],
    },
    {"model": "labelling.GoldSetVersion"},  # a publication
    {"model": "labelling.Adjudication"},
    {"model": "labelling.Taxonomy"},
    {"model": "labelling.TaxonomyClass"},
    {"model": "labelling.TaxonomyAlias"},
]

# Who made a row, for entries written outside a request (commands, services called with a
# user): the field of the audited row that names them. In a request the logged-in user is
# the actor (auditlog's middleware), whatever this says.
ACTOR_FIELDS = {
    "judges.JudgeVersion": "created_by",
    "triage.TriagePolicy": "created_by",
    "triage.ApiToken": "created_by",
    "labelling.GoldSetVersion": "published_by",
    "labelling.Adjudication": "adjudicator",
}


def audited_model_labels() -> list[str]:
    """The audited models as "app_label.ModelName"."""
    return [entry["model"] for entry in AUDITED_MODELS]
