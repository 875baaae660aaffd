"""Reads of the probes app that are more than a one-line query."""

from django.core.cache import cache

from probes.models import Catalogue, ProbeRun, Warehouse

WAREHOUSE_CACHE_SECONDS = 30


def catalogue_get_latest(*, warehouse_id: int | None) -> Catalogue | None:
    """Return the newest catalogue snapshot of the warehouse (with it), or None if never refreshed."""
    if warehouse_id is None:
        return None
    return Catalogue.objects.select_related("warehouse").filter(warehouse_id=warehouse_id).order_by("-version").first()


def warehouse_list_with_catalogues() -> list[Warehouse]:
    """Return every warehouse with its latest catalogue attached as `.latest_catalogue`."""
    warehouses = list(Warehouse.objects.order_by("name"))
    for warehouse in warehouses:
        warehouse.latest_catalogue = catalogue_get_latest(warehouse_id=warehouse.pk)
    return warehouses


def warehouse_names_allowing_result_egress() -> list[str]:
    """The warehouses whose result rows an admin has allowed to be sent to vendors."""
    return list(Warehouse.objects.filter(allow_result_egress=True).order_by("name").values_list("name", flat=True))


def probe_run_list_recent(*, warehouse: Warehouse, limit: int = 20) -> list[ProbeRun]:
    return list(ProbeRun.objects.filter(warehouse=warehouse).order_by("-created_at")[:limit])


def warehouse_map_by_name(*, names) -> dict[str, Warehouse]:
    """The warehouses with these names, by name; unknown names are absent.

    Ingestion looks warehouses up on every post and they almost never change, so each
    process keeps the ones it found for WAREHOUSE_CACHE_SECONDS; a name it has not seen
    is always read from the database, so a new warehouse is usable at once.
    """
    names = set(names)
    found = {name: w for name in names if (w := cache.get(warehouse_cache_key(name))) is not None}
    missing = names - found.keys()
    if missing:
        for warehouse in Warehouse.objects.filter(name__in=missing):
            cache.set(warehouse_cache_key(warehouse.name), warehouse, WAREHOUSE_CACHE_SECONDS)
            found[warehouse.name] = warehouse
    return found


def warehouse_cache_key(name: str) -> str:
    return f"probes:warehouse:{name}"
