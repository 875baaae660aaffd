"""Pages of the labeller's queue. HTTP only: role check, form, one service or selector, render."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from config.roles import LABEL_QUERIES, MANAGE_GOLDSETS, VIEW_GOLDSETS, permission_required
from labelling import queue_selectors, services
from labelling.blind import other_labels_for_labeller
from labelling.class_keys import class_keys_for
from labelling.error_classes import error_classes_split
from labelling.forms import InvariantsForm, LabelForm
from labelling.invariant_services import query_invariants_set
from labelling.models import GoldSet, Query, QuerySource
from labelling.preview import preview_query_for, query_preview
from labelling.queue_orders import queue_order_choices, queue_order_from_request

AUDIT_SCOPE = "audit"  # the queue of audit samples alone, outside any gold set


def _scope(scope: str) -> GoldSet | None:
    return None if scope == AUDIT_SCOPE else get_object_or_404(GoldSet, name=scope)


def _query_in_scope(gold_set: GoldSet | None, pk: int) -> Query:
    query = get_object_or_404(Query.objects.select_related("warehouse"), pk=pk)
    if query.source != QuerySource.AUDIT and (gold_set is None or query.gold_set_id != gold_set.pk):
        raise Http404("This item is not in this queue.")
    return query


def _render_item(
    request, scope: str, gold_set: GoldSet | None, query: Query | None, status=200, invariants_form=None, said=""
):
    """Render the item page, or only its `item` partial for htmx (and point the URL at it).

    `said` confirms what the labeller just did: in the page's status line for htmx, else as a
    message on the page the redirect opens.
    """
    context = {
        "confirmation": said,
        "scope": scope,
        "gold_set": gold_set,
        "query": query,
        # The item's own taxonomy: an audit sample in a gold set's queue is a live item.
        "error_class_keys": class_keys_for(query.gold_set if query is not None else gold_set),
        "progress": queue_selectors.queue_progress_get(user=request.user, gold_set=gold_set) if gold_set else None,
        "queue_order": queue_order_from_request(request),
        "queue_orders": queue_order_choices(),
    }
    if query is not None:
        context["my_label"] = queue_selectors.queue_label_get_current(user=request.user, query=query)
        # Blind double labelling: the others' labels only after one's own, where the gold set allows.
        context["other_labels"] = other_labels_for_labeller(user=request.user, query=query)
        context["disagreement"] = queue_selectors.disagreement_get(
            query=query, mine=context["my_label"], others=context["other_labels"]
        )
        context["can_adjudicate"] = request.user.has_perm(MANAGE_GOLDSETS)
        context["columns"] = queue_selectors.query_columns_get(query=query)
        context["sql_problem"] = queue_selectors.sql_unreadable_reason(sql=query.sql, dialect=query.dialect)
        context["invariants_form"] = invariants_form or InvariantsForm(initial={"invariants": query.invariants or None})
    template = "labelling/queue.html#item" if request.htmx else "labelling/queue.html"
    response = render(request, template, context, status=status)
    if request.htmx and query is not None:
        response["HX-Push-Url"] = reverse("labelling:queue_item", args=[scope, query.pk])
    elif request.htmx:
        response["HX-Push-Url"] = reverse("labelling:queue", args=[scope])
    return response


@permission_required(LABEL_QUERIES)
def queue(request, scope):
    """Open the queue at the next item waiting for this labeller (or say that none is left)."""
    gold_set = _scope(scope)
    query = queue_selectors.queue_item_get_next(
        user=request.user, gold_set=gold_set, order=queue_order_from_request(request)
    )
    if query is not None:
        return redirect("labelling:queue_item", scope, query.pk)
    return _render_item(request, scope, gold_set, None)


@permission_required(LABEL_QUERIES)
def queue_item(request, scope, pk):
    """Show one item: question, highlighted SQL, the columns it touches, its preview panel."""
    gold_set = _scope(scope)
    return _render_item(request, scope, gold_set, _query_in_scope(gold_set, pk))


@require_POST
@permission_required(LABEL_QUERIES)
def queue_label(request, scope, pk):
    """Save the labeller's label on this item and move on to the next one."""
    gold_set = _scope(scope)
    query = _query_in_scope(gold_set, pk)
    data = request.POST.copy()
    if data.get("error_class") and not data.get("decision"):
        # An error-class button submitted by the browser itself (htmx had not yet taken
        # over the freshly swapped item, or scripts are off) names only the class.
        data["decision"] = "wrong"
    form = LabelForm(data, gold_set=query.gold_set)
    if not form.is_valid():
        return _render_item(request, scope, gold_set, query, status=422)
    label = services.label_create(query=query, labeller=request.user, **form.cleaned_data)
    said = label_confirmation(label=label)
    following = queue_selectors.queue_item_get_following(
        user=request.user, gold_set=gold_set, query=query, order=queue_order_from_request(request)
    )
    if not request.htmx:
        messages.success(request, said)
        return (
            redirect("labelling:queue_item", scope, following.pk) if following else redirect("labelling:queue", scope)
        )
    return _render_item(request, scope, gold_set, following, said=said)


def label_confirmation(*, label) -> str:
    """Say what was saved, on which item, and how to take it back."""
    classes = f" ({', '.join(error_classes_split(label.error_class))})" if label.error_class else ""
    return f"Saved: {label.query.external_id} labelled {label.decision}{classes}. Press z to undo."


@permission_required(LABEL_QUERIES)
def queue_step(request, scope, pk, direction):
    """Go to the previous item (k) or the next one (j) in the labeller's history."""
    gold_set = _scope(scope)
    query = _query_in_scope(gold_set, pk)
    if direction == "prev":
        target = queue_selectors.queue_item_get_previous(user=request.user, gold_set=gold_set, query=query) or query
    else:
        target = queue_selectors.queue_item_get_following(
            user=request.user, gold_set=gold_set, query=query, order=queue_order_from_request(request)
        )
    if not request.htmx:
        return redirect("labelling:queue_item", scope, target.pk) if target else redirect("labelling:queue", scope)
    return _render_item(request, scope, gold_set, target)


@require_POST
@permission_required(LABEL_QUERIES)
def queue_undo(request, scope):
    """Retract the labeller's last label in this queue and return to that item."""
    gold_set = _scope(scope)
    last = queue_selectors.queue_label_get_last(user=request.user, gold_set=gold_set)
    if last is None:
        messages.info(request, "Nothing to undo.")
        return redirect("labelling:queue", scope)
    restored = services.label_undo(label=last)
    said = f"Undone: your label {last.decision} of {last.query.external_id} is withdrawn" + (
        f"; your earlier label {restored.decision} is current again." if restored else "; label it again now."
    )
    if not request.htmx:
        messages.success(request, said)
        return redirect("labelling:queue_item", scope, last.query_id)
    return _render_item(request, scope, gold_set, last.query, said=said)


@permission_required(VIEW_GOLDSETS)
def preview(request, pk):
    """Run the item (and its reference SQL) read-only and show the first rows and the comparison."""
    query = preview_query_for(user=request.user, pk=pk)
    return render(request, "labelling/preview.html", {"query": query, "preview": query_preview(query=query)})


@require_POST
@permission_required(LABEL_QUERIES)
def query_invariants(request, scope, pk):
    """Save the item's invariants and show the item again (422 with the field errors if invalid)."""
    gold_set = _scope(scope)
    query = _query_in_scope(gold_set, pk)
    form = InvariantsForm(request.POST)
    if not form.is_valid():
        response = _render_item(request, scope, gold_set, query, status=422, invariants_form=form)
        return response
    query_invariants_set(query=query, invariants=form.cleaned_data["invariants"])
    if not request.htmx:
        messages.success(request, "Invariants saved.")
        return redirect("labelling:queue_item", scope, query.pk)
    return _render_item(request, scope, gold_set, query)
