"""The alerts page (open and acknowledged alerts, with their deliveries) and its two actions.

Who sees it: analysts (the queue's SLA, failing live queries) and ML engineers (drift, failed
runs), as on the triage dashboard; admins, who pass every role. Labellers do not: alerts
name judges and their live rates, which the dashboard keeps from them too. Acknowledging and
resolving take an admin, as on the dashboard's banner.
"""

from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from config.roles import ADMIN, ANALYST, ML_ENGINEER, role_required
from triage.alerts import alert_acknowledge, alert_resolve
from triage.selectors import alerts_unresolved


@role_required(ANALYST, ML_ENGINEER)
def alerts(request):
    """List the unresolved alerts, open first, each with its delivery log."""
    return render(request, "triage/alerts.html", {"alerts": alerts_unresolved()})


def _back(request):
    return redirect("triage:alerts" if request.POST.get("back") == "alerts" else "triage:dashboard")


@require_POST
@role_required(ADMIN)
def acknowledge_alert(request, pk):
    alert_acknowledge(alert_id=pk, user=request.user)
    return _back(request)


@require_POST
@role_required(ADMIN)
def resolve_alert(request, pk):
    alert_resolve(alert_id=pk)
    return _back(request)
