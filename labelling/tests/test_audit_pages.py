"""The audit on the version page and at publish; the mutation action on the gold set's page."""

from django.core.management import call_command

from labelling import tasks
from labelling.models import GoldSetAudit, Query, QueryOrigin
from labelling.services import goldset_get_or_create, goldset_publish, label_create, query_create

EMPTY_SQL = "SELECT o.order_id FROM orders o WHERE o.status = 'lost'"


def gold_set_with_an_empty_reference(warehouse, name="paged"):
    gold_set = goldset_get_or_create(name=name)
    query = query_create(
        question="Which orders were lost?", sql=EMPTY_SQL, external_id="lost", warehouse=warehouse, gold_set=gold_set
    )
    label_create(query=query, labeller=None, decision="correct")
    return gold_set


def test_the_version_page_shows_the_latest_audit(demo_sqlite_warehouse, client_for):
    version = goldset_publish(gold_set=gold_set_with_an_empty_reference(demo_sqlite_warehouse))
    client = client_for("ml_engineer")
    assert "Not audited yet." in client.get("/labelling/goldsets/paged/v1/").content.decode()
    tasks.goldset_audit_run(version_id=version.pk)
    page = client.get("/labelling/goldsets/paged/v1/").content.decode()
    assert "empty_reference" in page and "1 warning" in page and "Run the audit again" in page
    # The findings read the final labels (a reference is the item's own SQL when labelled
    # correct): labelling is blind, so a labeller's version page leaves the audit out.
    blind = client_for("labeller").get("/labelling/goldsets/paged/v1/").content.decode()
    assert 'id="audit"' not in blind and "empty_reference" not in blind


def test_the_audit_button_enqueues_the_audit_after_the_commit(
    demo_sqlite_warehouse, client_for, django_capture_on_commit_callbacks
):
    goldset_publish(gold_set=gold_set_with_an_empty_reference(demo_sqlite_warehouse))
    client = client_for("ml_engineer")
    assert "Run the audit again" in client.get("/labelling/goldsets/paged/v1/").content.decode()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post("/labelling/goldsets/paged/v1/audit/")
    assert response.status_code == 302 and len(callbacks) == 1
    assert client_for("labeller").post("/labelling/goldsets/paged/v1/audit/").status_code == 403


def test_publish_gold_warns_about_the_audit_unless_told_not_to(demo_sqlite_warehouse, capsys):
    gold_set_with_an_empty_reference(demo_sqlite_warehouse)
    call_command("publish_gold", "--gold-set", "paged")
    captured = capsys.readouterr()
    assert "audit warning: 1 warning (empty_reference 1)" in captured.err and "lost: empty_reference" in captured.err
    call_command("publish_gold", "--gold-set", "paged", "--no-audit")
    assert "audit" not in capsys.readouterr().err
    assert GoldSetAudit.objects.count() == 1


def test_the_mutation_action_enqueues_the_seeding_and_the_task_proposes_items(
    demo_sqlite_warehouse, client_for, django_capture_on_commit_callbacks
):
    gold_set = goldset_get_or_create(name="mut")
    query = query_create(
        question="How many customers have a region?",
        sql="SELECT COUNT(*) FROM customers c LEFT JOIN regions r ON r.region_id = c.region_id",
        external_id="c1",
        warehouse=demo_sqlite_warehouse,
        gold_set=gold_set,
    )
    label_create(query=query, labeller=None, decision="correct")
    goldset_publish(gold_set=gold_set)
    client = client_for("ml_engineer")
    assert "Seed mutations" in client.get("/labelling/goldsets/mut/").content.decode()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post("/labelling/goldsets/mut/mutations/", {"per_item": "1", "classes": ["dropped_rows"]})
    assert response.status_code == 302 and len(callbacks) == 1
    assert client.post("/labelling/goldsets/mut/mutations/", {"per_item": "99"}).status_code == 302
    assert tasks.mutations_seed(gold_set_id=gold_set.pk, per_item=1, classes=["dropped_rows"]) == 1
    proposed = Query.objects.get(gold_set=gold_set, origin=QueryOrigin.MUTATED)
    assert proposed.metadata["mutation"]["operator"] == "left_to_inner"
    assert "1 proposed item waiting" in client.get("/labelling/goldsets/mut/").content.decode()
    assert client_for("labeller").post("/labelling/goldsets/mut/mutations/", {"per_item": "1"}).status_code == 403


def test_a_redelivered_audit_task_stores_its_audit_once(demo_sqlite_warehouse):
    version = goldset_publish(gold_set=gold_set_with_an_empty_reference(demo_sqlite_warehouse))
    first = tasks.goldset_audit_run.apply(args=[version.pk], task_id="audit-1").get()
    # The broker hands the same task out again (acks_late), or Celery retries it.
    assert tasks.goldset_audit_run.apply(args=[version.pk], task_id="audit-1").get() == first
    assert GoldSetAudit.objects.filter(version=version).count() == 1
    # Asked for again (a new task), the version is audited again.
    assert tasks.goldset_audit_run.apply(args=[version.pk], task_id="audit-2").get() != first
    assert GoldSetAudit.objects.filter(version=version).count() == 2
