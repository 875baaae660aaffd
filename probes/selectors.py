"""Reads of the probes app that are more than a one-line query."""

from probes.models import Catalogue, ProbeRun, Warehouse


def latest_catalogue(warehouse: Warehouse) -> Catalogue | None:
    """Return the newest catalogue snapshot of the warehouse, or None if never refreshed."""
    return Catalogue.objects.filter(warehouse=warehouse).order_by("-version").first()


def warehouse_list_with_catalogues() -> list[Warehouse]:
    """Return every warehouse with its latest catalogue attached as `.latest_catalogue`."""
    warehouses = list(Warehouse.objects.order_by("name"))
    for warehouse in warehouses:
        warehouse.latest_catalogue = latest_catalogue(warehouse)
    return warehouses


def recent_probe_runs(warehouse: Warehouse, limit: int = 20) -> list[ProbeRun]:
    return list(ProbeRun.objects.filter(warehouse=warehouse).order_by("-created_at")[:limit])
