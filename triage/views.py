"""Analyst pages: the queue, an item, decisions, resolved history, unjudged, dashboard."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from config.roles import ADMIN, ANALYST, ML_ENGINEER, role_required
from judges.models import JudgeVersion
from labelling.models import ErrorClass
from probes.models import Warehouse
from triage import selectors
from triage.attempts import live_replay_summary
from triage.forms import DecisionForm, ReopenForm
from triage.models import TriageItem, TriageStatus
from triage.monitoring import alert_acknowledge
from triage.policy import policy_current
from triage.queue import triage_item_claim_next, triage_item_release, triage_item_reopen, triage_item_resolve


@role_required(ANALYST)
def index(request):
    """Show the claimable queue in its useful order, with filters and SLA breaches."""
    filters = selectors.QueueFilters.from_query_dict(request.GET)
    context = {
        "items": selectors.queue_items(filters=filters),
        "claimed": selectors.claimed_items(),
        "filters": filters,
        "warehouses": Warehouse.objects.values_list("name", flat=True),
        "judges": JudgeVersion.objects.select_related("judge").filter(triage_policies__isnull=False).distinct(),
        "error_classes": ErrorClass.choices,
        "policy": policy_current(),
    }
    return render(request, "triage/index.html", context)


@require_POST
@role_required(ANALYST)
def claim_next(request):
    """Claim the next item (respecting the queue filters) and open it."""
    filters = selectors.QueueFilters.from_query_dict(request.POST)
    item = triage_item_claim_next(analyst=request.user, queryset=filters.apply(TriageItem.objects.all()))
    if item is None:
        messages.info(request, "The queue is empty.")
        return redirect("triage:index")
    return redirect("triage:item", pk=item.pk)


@role_required(ANALYST)
def item(request, pk):
    """Show one item with all its evidence; the holder decides with the keyboard."""
    triage_item = get_object_or_404(TriageItem.objects.select_related("query__warehouse", "assignee"), pk=pk)
    context = {
        "item": triage_item,
        "form": DecisionForm(),
        "holds_claim": triage_item.status == TriageStatus.CLAIMED and triage_item.assignee_id == request.user.pk,
        "error_classes": ErrorClass.choices,
        **selectors.item_evidence(item=triage_item),
    }
    return render(request, "triage/item.html", context)


@require_POST
@role_required(ANALYST)
def decide(request, pk):
    """Record the decision as a triage label, then open the next item at once."""
    get_object_or_404(TriageItem, pk=pk)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect("triage:item", pk=pk)
    try:
        triage_item_resolve(item_id=pk, analyst=request.user, **form.cleaned_data)
    except PermissionDenied as exc:
        messages.error(request, str(exc))
        return redirect("triage:item", pk=pk)
    next_item = triage_item_claim_next(analyst=request.user)
    if next_item is None:
        messages.info(request, "Decision saved. The queue is empty.")
        return redirect("triage:index")
    return redirect("triage:item", pk=next_item.pk)


@require_POST
@role_required(ANALYST)
def release(request, pk):
    """Give the item back to the queue without deciding it."""
    triage_item_release(item=get_object_or_404(TriageItem, pk=pk), analyst=request.user)
    return redirect("triage:index")


@role_required(ANALYST)
def resolved(request):
    """Browse resolved items; admins can reopen one from its page."""
    return render(request, "triage/resolved.html", {"items": selectors.resolved_items()})


@require_POST
@role_required(ADMIN)
def reopen(request, pk):
    """Reverse a resolution: the label becomes history, the item returns to the queue."""
    get_object_or_404(TriageItem, pk=pk)
    form = ReopenForm(request.POST)
    form.is_valid()
    try:
        triage_item_reopen(item_id=pk, admin=request.user, note=form.cleaned_data.get("note", ""))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, "Item reopened; its label is kept as history.")
    return redirect("triage:item", pk=pk)


@role_required(ANALYST)
def unjudged(request):
    """List live queries on which every judge errored."""
    return render(request, "triage/unjudged.html", {"queries": selectors.unjudged_queries()})


@role_required(ANALYST, ML_ENGINEER)
def dashboard(request):
    """Show queue health, per-judge live precision, alerts and the live error-rate estimates."""
    context = selectors.dashboard_figures()
    context["loop_replay"] = live_replay_summary(days=7)  # None unless attempt logs exist
    return render(request, "triage/dashboard.html", context)


@require_POST
@role_required(ADMIN)
def acknowledge_alert(request, pk):
    alert_acknowledge(alert_id=pk, user=request.user)
    return redirect("triage:dashboard")
