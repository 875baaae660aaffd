"""RequestAttempt moved from triage to loops: the rows recorded before the move are the loop lab's after it."""

import pytest
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor

from loops.models import RequestAttempt
from triage.tests import factories

BEFORE = [("triage", "0010_merge_alerts_and_audit_scope"), ("loops", None)]


def migrate(targets):
    """Migrate the test database to `targets`; return the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state([target for target in targets if target[1] is not None]).apps


def migrate_to_the_latest():
    """Every app back at its newest migration: the tests after this one need the whole schema
    (going back to BEFORE also unapplied triage's later migrations, such as the monitoring passes)."""
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_attempts_recorded_in_triage_survive_the_move_to_loops():
    live = factories.live_query(external_id="before-the-move")
    try:
        old_apps = migrate(BEFORE)
        assert "requestattempt" not in old_apps.all_models["loops"]
        OldAttempt = old_apps.get_model("triage", "RequestAttempt")
        OldAttempt.objects.create(live_query_id=live.pk, position=1, tier="cheap", attempt=1, failure_class="syntax")
        OldAttempt.objects.create(live_query_id=live.pk, position=2, tier="strong", attempt=1, tokens=900)
    finally:
        migrate_to_the_latest()
    moved = list(
        RequestAttempt.objects.filter(live_query=live).values_list("position", "tier", "failure_class", "tokens")
    )
    assert moved == [(1, "cheap", "syntax", None), (2, "strong", "", 900)]
    # The table and its constraints are the same ones: a position recorded twice is still refused.
    assert RequestAttempt._meta.db_table == "triage_requestattempt"
    with pytest.raises(IntegrityError):
        RequestAttempt.objects.create(live_query=live, position=1, tier="cheap", attempt=2)
