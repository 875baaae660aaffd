"""The alerts page (open and acknowledged alerts, with their deliveries) and its two actions.

Who sees it: whoever may see the triage dashboard (`VIEW_MONITORING`: analysts for the queue's
SLA and failing live queries, ML engineers for drift and failed runs, and admins). Labellers do
not: alerts name judges and their live rates, which the dashboard keeps from them too.
Acknowledging and resolving take `ACKNOWLEDGE_ALERT` (admins), as on the dashboard's banner.
"""

from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from config.roles import ACKNOWLEDGE_ALERT, VIEW_MONITORING, permission_required
from triage.alerts import alert_acknowledge, alert_resolve
from triage.selectors import alerts_unresolved


@permission_required(VIEW_MONITORING)
def alerts(request):
    """List the unresolved alerts, open first, each with its delivery log."""
    return render(request, "triage/alerts.html", {"alerts": alerts_unresolved()})


def _back(request):
    return redirect("triage:alerts" if request.POST.get("back") == "alerts" else "triage:dashboard")


@require_POST
@permission_required(ACKNOWLEDGE_ALERT)
def acknowledge_alert(request, pk):
    alert_acknowledge(alert_id=pk, user=request.user)
    return _back(request)


@require_POST
@permission_required(ACKNOWLEDGE_ALERT)
def resolve_alert(request, pk):
    alert_resolve(alert_id=pk)
    return _back(request)
