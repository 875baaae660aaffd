"""RequestAttempt moves to the loop lab (loops/0001_request_attempts): triage forgets the model, the table stays.

Only Django's idea of the models changes; the table `triage_requestattempt`, its rows, its
constraints and its index are untouched (loops' model keeps `db_table = "triage_requestattempt"`).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("triage", "0010_merge_alerts_and_audit_scope"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="RequestAttempt")],
            database_operations=[],
        ),
    ]
