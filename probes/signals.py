"""Signal receivers of the probes app (connected in `ProbesConfig.ready`)."""

from django.core.cache import cache

from probes.models import Warehouse
from probes.selectors import warehouse_cache_key


def forget_warehouse(sender, instance: Warehouse, **kwargs) -> None:
    """Drop a saved or deleted warehouse from this process's cache."""
    cache.delete(warehouse_cache_key(instance.name))
