from django.shortcuts import render

from config.roles import ANALYST, role_required
from triage.models import TriageItem, TriageStatus


@role_required(ANALYST)
def index(request):
    """Show the open triage queue."""
    items = TriageItem.objects.filter(status=TriageStatus.OPEN).select_related("query")[:50]
    return render(request, "triage/index.html", {"items": items})
