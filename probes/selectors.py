"""Reads of the probes app that are more than a one-line query."""

from django.core.cache import cache

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


WAREHOUSE_CACHE_SECONDS = 30


def warehouses_named(names) -> dict[str, Warehouse]:
    """The warehouses with these names, by name; unknown names are absent.

    Ingestion looks warehouses up on every post and they almost never change, so each
    process keeps the ones it found for WAREHOUSE_CACHE_SECONDS; a name it has not seen
    is always read from the database, so a new warehouse is usable at once.
    """
    names = set(names)
    found = {name: w for name in names if (w := cache.get(_warehouse_cache_key(name))) is not None}
    missing = names - found.keys()
    if missing:
        for warehouse in Warehouse.objects.filter(name__in=missing):
            cache.set(_warehouse_cache_key(warehouse.name), warehouse, WAREHOUSE_CACHE_SECONDS)
            found[warehouse.name] = warehouse
    return found


def _warehouse_cache_key(name: str) -> str:
    return f"probes:warehouse:{name}"


def forget_warehouse(sender, instance: Warehouse, **kwargs) -> None:
    """Drop a saved or deleted warehouse from this process's cache (connected in apps.py)."""
    cache.delete(_warehouse_cache_key(instance.name))
