"""The admin's warehouse setup in the browser: register by URL, test the connection, refresh the catalogue."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from config.roles import MANAGE_WAREHOUSES, VIEW_WAREHOUSES, permission_required
from probes.catalogue_jobs import catalogue_refresh_request
from probes.models import CatalogueRefresh, Warehouse
from probes.role_check import UnsafeWarehouseRole
from probes.setup_forms import WarehouseSetupForm
from probes.warehouse_setup import connection_test, reader_role_statements
from probes.warehouses import WarehouseUnavailable, warehouse_register


@permission_required(MANAGE_WAREHOUSES)
def warehouse_add(request):
    """Register a warehouse by its connection URL; an unsafe role is refused with each finding."""
    form = WarehouseSetupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            warehouse = warehouse_register(
                name=data["name"], dialect=data["dialect"], dsn=data["url"], description=data["description"]
            )
        except UnsafeWarehouseRole as exc:
            form.add_error(
                "url",
                [f"The login role {exc.check.login_role!r} can do more than read:", *exc.check.findings],
            )
        except WarehouseUnavailable as exc:
            form.add_error("url", str(exc))
        else:
            messages.success(request, f"Registered {warehouse.name}. Test the connection, then refresh its catalogue.")
            return redirect("probes:catalogue", warehouse.name)
    context = {"form": form, "statements": reader_role_statements()}
    return render(request, "probes/warehouse_add.html", context, status=400 if form.errors else 200)


@require_POST
@permission_required(MANAGE_WAREHOUSES)
def warehouse_test(request, name):
    """Connect as Docket would and run the role check now; show each finding."""
    warehouse = get_object_or_404(Warehouse, name=name)
    return render(request, "probes/_connection_test.html", {"warehouse": warehouse, "test": connection_test(warehouse)})


@require_POST
@permission_required(MANAGE_WAREHOUSES)
def warehouse_refresh(request, name):
    """Queue a catalogue refresh (a task) and show its progress."""
    warehouse = get_object_or_404(Warehouse, name=name)
    refresh = catalogue_refresh_request(warehouse=warehouse, requested_by=request.user)
    if not request.htmx:
        return redirect("probes:catalogue", warehouse.name)
    return render(request, "probes/_refresh_progress.html", {"refresh": refresh, "warehouse": warehouse})


@permission_required(VIEW_WAREHOUSES)
def refresh_status(request, name, pk):
    """The progress of one refresh (polled by the warehouse page until it finishes)."""
    refresh = get_object_or_404(CatalogueRefresh.objects.select_related("warehouse"), pk=pk, warehouse__name=name)
    return render(request, "probes/_refresh_progress.html", {"refresh": refresh, "warehouse": refresh.warehouse})
