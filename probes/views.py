from django.shortcuts import render

from config.roles import ADMIN, ML_ENGINEER, role_required
from probes.models import Warehouse


@role_required(ML_ENGINEER, ADMIN)
def index(request):
    """List registered warehouses (names and dialects only; DSNs are never shown)."""
    return render(request, "probes/index.html", {"warehouses": Warehouse.objects.all()})
