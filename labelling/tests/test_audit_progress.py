"""Publishing's audit is a task with progress on the version page, not work inside the request (issue 33)."""

import pytest
from django.contrib.messages import get_messages

from config.progress import TaskStatus
from labelling import tasks
from labelling.audit import goldset_audit
from labelling.models import GoldSetAudit
from labelling.services import goldset_get_or_create, goldset_publish, label_create, query_create
from labelling.tests.test_audit_pages import gold_set_with_an_empty_reference
from tests.support.fixtures import wait_for

PAGE = "/labelling/goldsets/paged/v1/"


def test_publishing_queues_the_audit_and_the_page_shows_its_progress_then_its_findings(
    demo_sqlite_warehouse, client_for, django_capture_on_commit_callbacks
):
    gold_set_with_an_empty_reference(demo_sqlite_warehouse)
    client = client_for("ml_engineer")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post("/labelling/goldsets/paged/publish/", {"resolve": "manual"})
    # The request returned with the audit queued, not run: one task sent after the commit.
    assert response.status_code == 302 and len(callbacks) == 1
    audit = GoldSetAudit.objects.get()
    assert (audit.status, audit.items_done, audit.items_total, audit.findings) == (TaskStatus.QUEUED, 0, 1, [])
    infos = [str(m) for m in get_messages(response.wsgi_request) if m.level_tag == "info"]
    assert infos and "Auditing paged v1 in the background" in infos[0]
    page = client.get(PAGE).content.decode()
    progress_url = f"/labelling/goldsets/paged/v1/audit/{audit.pk}/"
    assert f'hx-get="{progress_url}"' in page and "Audit queued: waiting for a worker" in page
    assert "Not audited yet." in page
    # The task the callback would send, run here: it writes its findings on the same row.
    assert tasks.goldset_audit_run(version_id=audit.version_id, audit_id=audit.pk) == audit.pk
    audit.refresh_from_db()
    assert (audit.status, audit.items_done, audit.items_checked) == (TaskStatus.DONE, 1, 1)
    polled = client.get(progress_url, HTTP_HX_REQUEST="true")
    assert polled["HX-Refresh"] == "true" and "hx-get" not in polled.content.decode()
    page = client.get(PAGE).content.decode()
    assert "empty_reference" in page and "1 warning" in page and 'id="audit-progress"' not in page


def test_a_redelivered_audit_task_leaves_a_finished_audit_alone(demo_sqlite_warehouse, client_for):
    version = goldset_publish(gold_set=gold_set_with_an_empty_reference(demo_sqlite_warehouse))
    client_for("ml_engineer").post(f"{PAGE}audit/")
    audit = GoldSetAudit.objects.get(version=version)
    tasks.goldset_audit_run(version_id=version.pk, audit_id=audit.pk)
    finished = GoldSetAudit.objects.get(pk=audit.pk).finished_at
    tasks.goldset_audit_run(version_id=version.pk, audit_id=audit.pk)
    assert GoldSetAudit.objects.get(pk=audit.pk).finished_at == finished
    assert GoldSetAudit.objects.filter(version=version).count() == 1


def test_asking_twice_while_an_audit_is_pending_queues_it_once(demo_sqlite_warehouse, client_for):
    goldset_publish(gold_set=gold_set_with_an_empty_reference(demo_sqlite_warehouse))
    client = client_for("ml_engineer")
    client.post(f"{PAGE}audit/")
    client.post(f"{PAGE}audit/")
    assert GoldSetAudit.objects.filter(status=TaskStatus.QUEUED).count() == 1


def test_the_audit_reports_its_progress_as_it_goes(demo_sqlite_warehouse):
    gold_set = goldset_get_or_create(name="many")
    for index in range(45):
        query = query_create(
            question=f"How many orders, take {index}?",
            sql=f"SELECT COUNT(*) + {index} FROM orders",
            external_id=f"n{index}",
            warehouse=demo_sqlite_warehouse,
            gold_set=gold_set,
        )
        label_create(query=query, labeller=None, decision="correct")
    version = goldset_publish(gold_set=gold_set)
    seen = []
    report = goldset_audit(version=version, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 45), (20, 45), (40, 45)] and report["items"] == 45


def test_the_progress_partial_is_for_engineers(demo_sqlite_warehouse, client_for):
    goldset_publish(gold_set=gold_set_with_an_empty_reference(demo_sqlite_warehouse))
    client_for("ml_engineer").post(f"{PAGE}audit/")
    url = f"{PAGE}audit/{GoldSetAudit.objects.get().pk}/"
    assert client_for("ml_engineer").get(url).status_code == 200
    assert client_for("labeller").get(url).status_code == 403


@pytest.mark.worker
def test_a_real_worker_audits_a_published_version_while_the_page_shows_progress(
    demo_sqlite_warehouse, client_for, celery_worker_process
):
    gold_set_with_an_empty_reference(demo_sqlite_warehouse)
    client = client_for("ml_engineer")
    assert client.post("/labelling/goldsets/paged/publish/", {"resolve": "manual"}).status_code == 302
    audit = GoldSetAudit.objects.get()
    wait_for(
        lambda: GoldSetAudit.objects.get(pk=audit.pk).finished,
        timeout=120,
        what=f"the worker to audit the version (log: {celery_worker_process.output()[-2000:]})",
    )
    audit.refresh_from_db()
    assert audit.status == TaskStatus.DONE, audit.message
    polled = client.get(f"{PAGE}audit/{audit.pk}/", HTTP_HX_REQUEST="true")
    assert polled["HX-Refresh"] == "true"
    page = client.get(PAGE).content.decode()
    assert "empty_reference" in page and "1 warning" in page
