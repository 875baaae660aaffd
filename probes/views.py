from django.shortcuts import get_object_or_404, render

from config.roles import VIEW_WAREHOUSES, permission_required
from probes.catalogue_jobs import catalogue_refresh_latest
from probes.models import Warehouse
from probes.selectors import catalogue_get_latest, probe_run_list_recent, warehouse_list_with_catalogues
from probes.verifier import effective_rules
from probes.warehouse_setup import dsn_source, warehouse_reader_statements


@permission_required(VIEW_WAREHOUSES)
def index(request):
    """List registered warehouses (names and dialects only; DSNs are never shown)."""
    return render(request, "probes/index.html", {"warehouses": warehouse_list_with_catalogues()})


@permission_required(VIEW_WAREHOUSES)
def catalogue(request, name):
    """Show a warehouse's latest catalogue: tables, columns, keys, row estimates."""
    warehouse = get_object_or_404(Warehouse, name=name)
    context = {
        "warehouse": warehouse,
        "catalogue": catalogue_get_latest(warehouse_id=warehouse.pk),
        "rules": effective_rules(warehouse, None),
        "probe_runs": probe_run_list_recent(warehouse=warehouse),
        "statements": warehouse_reader_statements(warehouse),
        "refresh": catalogue_refresh_latest(warehouse),
        "dsn_source": dsn_source(warehouse),
    }
    return render(request, "probes/catalogue.html", context)
