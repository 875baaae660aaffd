"""The browser's "Refresh catalogue": a task whose progress the warehouse page shows.

`catalogue_refresh_request` stores a `CatalogueRefresh` and sends `probes.refresh_catalogue`
after the commit (by name: tasks import services, never the reverse); the task calls
`catalogue_refresh_tracked`, which runs `probes/catalogue.py` `catalogue_refresh` and writes
each step, then the outcome, on the row the page polls.
"""

import psycopg
from celery import current_app
from django.db import transaction
from django.utils import timezone

from config.progress import TaskStatus
from probes.catalogue import catalogue_refresh
from probes.models import REFRESH_STEPS, CatalogueRefresh, Warehouse
from probes.role_check import UnsafeWarehouseRole
from probes.warehouses import WarehouseUnavailable

REFRESH_TASK = "probes.refresh_catalogue"


def catalogue_refresh_request(*, warehouse: Warehouse, requested_by=None) -> CatalogueRefresh:
    """Queue a refresh unless one is already queued or running; return the one that will run."""
    pending = CatalogueRefresh.objects.filter(
        warehouse=warehouse, status__in=[TaskStatus.QUEUED, TaskStatus.RUNNING]
    ).first()
    if pending is not None:
        return pending
    refresh = CatalogueRefresh.objects.create(warehouse=warehouse, requested_by=requested_by, step="queued")
    transaction.on_commit(lambda: current_app.send_task(REFRESH_TASK, kwargs={"refresh_id": refresh.pk}))
    return refresh


def _update(refresh_id: int, **fields) -> None:
    CatalogueRefresh.objects.filter(pk=refresh_id).update(**fields)


def catalogue_refresh_tracked(refresh_id: int) -> str | None:
    """Run one requested refresh, recording each step; return its status (None if no such request)."""
    refresh = CatalogueRefresh.objects.select_related("warehouse").filter(pk=refresh_id).first()
    if refresh is None or refresh.finished:
        return refresh.status if refresh else None
    _update(refresh_id, status=TaskStatus.RUNNING)

    def progress(step: str) -> None:
        _update(refresh_id, step=step, steps_done=REFRESH_STEPS.index(step))

    try:
        catalogue = catalogue_refresh(warehouse=refresh.warehouse, progress=progress)
    except UnsafeWarehouseRole as exc:
        status, message, catalogue = TaskStatus.FAILED, str(exc), None
    except (WarehouseUnavailable, psycopg.Error, OSError) as exc:
        status, message, catalogue = TaskStatus.FAILED, f"could not read the warehouse: {exc}", None
    else:
        status = TaskStatus.DONE
        tables = len(catalogue.snapshot.get("tables", {}))
        message = f"catalogue v{catalogue.version}: {tables} tables and views"
    _update(
        refresh_id,
        status=status,
        message=message[:2000],
        catalogue=catalogue,
        steps_done=len(REFRESH_STEPS) if status == TaskStatus.DONE else refresh.steps_done,
        step="done" if status == TaskStatus.DONE else "failed",
        finished_at=timezone.now(),
    )
    return status


def catalogue_refresh_latest(warehouse: Warehouse) -> CatalogueRefresh | None:
    return CatalogueRefresh.objects.filter(warehouse=warehouse).first()
