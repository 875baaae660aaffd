"""Labellers write an item's answer-free invariants from the queue page."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from config.roles import LABEL_QUERIES, permission_required
from labelling.forms import InvariantsForm
from labelling.invariant_services import query_invariants_set
from labelling.queue_views import _query_in_scope, _render_item, _scope


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
