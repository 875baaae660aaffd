"""What the "send a live query from this page" form offers: the warehouses a query may name."""

from probes.models import Warehouse


def try_query_warehouses() -> dict:
    """The registered warehouse names, the newest preselected (the one an admin just set up)."""
    names = list(Warehouse.objects.order_by("name").values_list("name", flat=True))
    newest = Warehouse.objects.order_by("-created_at", "-pk").values_list("name", flat=True).first()
    return {"warehouse_names": names, "warehouse_name": newest or ""}
