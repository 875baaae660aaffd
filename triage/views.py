"""Analyst pages: the queue, an item, decisions, resolved history, unjudged, dashboard."""

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from config.roles import (
    OVERRIDE_TRIAGE,
    REQUEUE_LIVE_QUERY,
    RUN_MONITORING,
    VIEW_MONITORING,
    VIEW_TRIAGE,
    WORK_TRIAGE,
    permission_check,
    permission_required,
)
from judges.models import JudgeVersion
from labelling.taxonomy import class_choices
from probes.models import Warehouse
from triage import selectors
from triage.claims import live_query_requeue
from triage.filters import PROBE_OUTCOMES, ResolvedFilter
from triage.forms import DecisionForm, ReopenForm
from triage.models import LiveQuery, MonitorPass, TriageItem, TriageStatus
from triage.monitor_passes import monitor_pass_latest, monitor_pass_request
from triage.policy import policy_current
from triage.queue import (
    queue_order_sentence,
    triage_item_claim_next,
    triage_item_release,
    triage_item_reopen,
    triage_item_resolve,
)
from triage.undo import triage_item_undo_resolve, undo_deadline

# How long the dashboard shows a finished "Compute it now" pass and its outcome.
MONITOR_PASS_SHOWN = timedelta(minutes=10)

UNDO_SESSION_KEY = "triage_undo_item"
QUEUE_REFRESH_S = 10  # how often the queue page fetches its list again


def _get_item_for_user(request, pk, *, perm=VIEW_TRIAGE) -> TriageItem:
    """Return a triage item the user may work on, else 403 (no permission) or 404 (no such item).

    The queue is shared: every analyst may open any item; who may decide it (the claim's
    holder) is the queue services' rule. Reopening takes an admin (`perm=OVERRIDE_TRIAGE`).
    """
    permission_check(request.user, perm)
    return get_object_or_404(TriageItem.objects.select_related("query__warehouse", "assignee"), pk=pk)


@permission_required(VIEW_TRIAGE)
def index(request):
    """Show the claimable queue in its useful order, with filters and SLA breaches.

    The page polls itself with htmx every QUEUE_REFRESH_S seconds and swaps in only the list
    (the `queue-live` partial), so new items appear without a reload.
    """
    filters = selectors.queue_filter(params=request.GET)
    page, claimable = selectors.queue_page(filters=filters, page=request.GET.get("page"))
    live = {
        "page": page,
        "claimable": claimable,
        "filter_params": filters.params(),
        "claimed": selectors.claimed_items(),
        "refresh_s": QUEUE_REFRESH_S,
        "order_sentence": queue_order_sentence(),
    }
    if request.htmx:
        return render(request, "triage/index.html#queue-live", live)
    context = {
        **live,
        "probe_outcomes": PROBE_OUTCOMES,
        "filters": filters.values(),
        "warehouses": Warehouse.objects.values_list("name", flat=True),
        "judges": JudgeVersion.objects.select_related("judge").filter(triage_policies__isnull=False).distinct(),
        "error_classes": class_choices(None),
        "policy": policy_current(),
        "undo": undo_offer(request),
    }
    return render(request, "triage/index.html", context)


@require_POST
@permission_required(WORK_TRIAGE)
def claim_next(request):
    """Claim the next item (respecting the queue filters) and open it."""
    filters = selectors.queue_filter(params=request.POST, queryset=TriageItem.objects.all())
    asked_at = timezone.now()
    item = triage_item_claim_next(analyst=request.user, queryset=filters.qs)
    if item is None:
        messages.info(
            request,
            "The queue is empty: nothing to claim."
            if not filters.params()
            else "No waiting item matches these filters: nothing claimed.",
        )
        return redirect("triage:index")
    messages.success(request, claim_confirmation(item=item, held=item.claimed_at < asked_at))
    return redirect("triage:item", pk=item.pk)


def claim_confirmation(*, item: TriageItem, held: bool) -> str:
    """Say which item the analyst now holds, and until when."""
    until = timezone.localtime(item.claim_expires_at).strftime("%H:%M")
    if held:
        return f"You still hold item {item.pk} (until {until}): decide it or give it back before claiming another."
    return f"Claimed item {item.pk}: it is yours until {until}."


@permission_required(VIEW_TRIAGE)
def item(request, pk):
    """Show one item with all its evidence; the holder decides with the keyboard."""
    triage_item = _get_item_for_user(request, pk)
    context = {
        "item": triage_item,
        "form": DecisionForm(),
        "holds_claim": triage_item.status == TriageStatus.CLAIMED and triage_item.assignee_id == request.user.pk,
        "error_classes": class_choices(None),
        "undo": undo_offer(request),
        **selectors.item_evidence(item=triage_item),
    }
    return render(request, "triage/item.html", context)


@require_POST
@permission_required(WORK_TRIAGE)
def decide(request, pk):
    """Record the decision as a triage label, then open the next item at once."""
    _get_item_for_user(request, pk)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect("triage:item", pk=pk)
    try:
        triage_item_resolve(item_id=pk, analyst=request.user, **form.cleaned_data)
    except PermissionDenied as exc:
        messages.error(request, str(exc))
        return redirect("triage:item", pk=pk)
    # The next page shows a "saved" toast with an undo for this decision.
    request.session[UNDO_SESSION_KEY] = pk
    next_item = triage_item_claim_next(analyst=request.user)
    if next_item is None:
        return redirect("triage:index")
    return redirect("triage:item", pk=next_item.pk)


def undo_offer(request) -> dict | None:
    """The decision this analyst just saved, if it can still be undone (shown once, as a toast)."""
    pk = request.session.pop(UNDO_SESSION_KEY, None)
    resolved = TriageItem.objects.filter(pk=pk, status=TriageStatus.RESOLVED, resolved_by=request.user).first()
    if resolved is None:
        return None
    until = undo_deadline(resolved)
    left = max(1, int((until - timezone.now()).total_seconds())) if until else 1
    return {"item": resolved, "until": until, "hide_after_s": left}


@require_POST
@permission_required(WORK_TRIAGE)
def undo(request, pk):
    """Take back the decision just made on this item and open it again."""
    _get_item_for_user(request, pk)
    try:
        triage_item_undo_resolve(item_id=pk, analyst=request.user)
    except (PermissionDenied, ValidationError) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))
        return redirect("triage:item", pk=pk)
    messages.success(request, f"Decision on item {pk} undone: it is yours to decide again.")
    return redirect("triage:item", pk=pk)


@require_POST
@permission_required(WORK_TRIAGE)
def release(request, pk):
    """Give the item back to the queue without deciding it, or say why it cannot be given back."""
    try:
        triage_item_release(item=_get_item_for_user(request, pk), analyst=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("triage:item", pk=pk)
    messages.success(request, f"Gave item {pk} back to the queue.")
    return redirect("triage:index")


@permission_required(VIEW_TRIAGE)
def resolved(request):
    """Browse resolved items with their notes, filtered by decision, error class, analyst and dates."""
    filtered = ResolvedFilter(request.GET, queryset=selectors.resolved_queryset())
    query = urlencode({name: value for name, value in request.GET.items() if value})
    context = {"filter": filtered, "items": selectors.resolved_items(queryset=filtered.qs), "query": query}
    context["limit"] = selectors.RESOLVED_PAGE_LIMIT
    return render(request, "triage/resolved.html", context)


@require_POST
@permission_required(OVERRIDE_TRIAGE)
def reopen(request, pk):
    """Reverse a resolution: the label becomes history, the item returns to the queue."""
    _get_item_for_user(request, pk, perm=OVERRIDE_TRIAGE)
    form = ReopenForm(request.POST)
    form.is_valid()
    try:
        triage_item_reopen(item_id=pk, admin=request.user, note=form.cleaned_data.get("note", ""))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, "Item reopened; its label is kept as history.")
    return redirect("triage:item", pk=pk)


@permission_required(VIEW_TRIAGE)
def unjudged(request):
    """List live queries on which every judge errored, and those the pipeline gave up on."""
    context = {
        "queries": selectors.unjudged_queries(),
        "failed": selectors.failed_queries(),
        "max_attempts": settings.TRIAGE_MAX_ATTEMPTS,
    }
    return render(request, "triage/unjudged.html", context)


@require_POST
@permission_required(REQUEUE_LIVE_QUERY)
def requeue(request, pk):
    """Send a failed live query through the pipeline again, with a fresh attempt budget."""
    get_object_or_404(LiveQuery, pk=pk)
    if live_query_requeue(live_id=pk):
        messages.success(request, "Sent to the pipeline again.")
    else:
        messages.info(request, "That query is not failed (any more): nothing to requeue.")
    return redirect("triage:unjudged")


@permission_required(VIEW_MONITORING)
def dashboard(request):
    """Show queue health, per-judge live precision, alerts and the live error-rate estimates."""
    context = selectors.dashboard_figures()
    context["monitor_every_minutes"] = round(settings.CELERY_BEAT_SCHEDULE["triage-monitor-judges"]["schedule"] / 60)
    context["can_monitor"] = request.user.has_perm(RUN_MONITORING)
    context["monitor_pass"] = monitor_pass_latest(within=MONITOR_PASS_SHOWN)
    return render(request, "triage/dashboard.html", context)


@require_POST
@permission_required(RUN_MONITORING)
def monitor_now(request):
    """Queue the hourly monitoring pass now (a task), so a fresh install need not wait an hour for estimates."""
    monitor_pass_request(requested_by=request.user)
    messages.info(request, "Monitoring in the background: the dashboard shows its progress, then the estimates.")
    return redirect("triage:dashboard")


@permission_required(VIEW_MONITORING)
def monitor_pass_progress(request, pk):
    """The progress of one monitoring pass (polled by the dashboard until it finishes, then the page reloads)."""
    monitor_pass = get_object_or_404(MonitorPass, pk=pk)
    response = render(request, "triage/_monitor_pass.html", {"monitor_pass": monitor_pass})
    if monitor_pass.finished and request.htmx:
        response["HX-Refresh"] = "true"
    return response
