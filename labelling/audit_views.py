"""Page actions of the audit and of mutation seeding: each enqueues one task after the commit; an audit's progress."""

from celery import current_app
from django.contrib import messages
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from config.roles import MANAGE_GOLDSETS, permission_required
from labelling.audit import goldset_audit_request
from labelling.models import GoldSet, GoldSetAudit, GoldSetVersion
from labelling.mutation_operators import operators_for

MAX_PER_ITEM = 10


def enqueue(task: str, **kwargs) -> None:
    transaction.on_commit(lambda: current_app.send_task(task, kwargs=kwargs))


@require_POST
@permission_required(MANAGE_GOLDSETS)
def version_audit(request, name, number):
    """Audit the version again in the background; the section shows the result once stored."""
    version = get_object_or_404(GoldSetVersion, gold_set__name=name, number=number, is_frozen=True)
    goldset_audit_request(version=version)
    messages.info(request, f"Auditing {version} in the background: the Audit section shows its progress.")
    return redirect("labelling:version_browse", name, number)


@permission_required(MANAGE_GOLDSETS)
def audit_progress(request, name, number, pk):
    """The progress of one audit (polled by the version page until it finishes, then the page reloads)."""
    pending = get_object_or_404(
        GoldSetAudit.objects.select_related("version__gold_set"),
        pk=pk,
        version__gold_set__name=name,
        version__number=number,
    )
    response = render(request, "labelling/_audit_progress.html", {"pending": pending, "version": pending.version})
    if pending.finished and request.htmx:
        # Finished: reload once so the findings show, as the run page does when its run ends.
        response["HX-Refresh"] = "true"
    return response


@require_POST
@permission_required(MANAGE_GOLDSETS)
def mutations_seed(request, name):
    """Seed mutated proposals from the latest version, as `seed_mutations` does, in the background."""
    gold_set = get_object_or_404(GoldSet, name=name)
    try:
        per_item = int(request.POST.get("per_item", "1"))
    except ValueError:
        per_item = 0
    classes = request.POST.getlist("classes") or None
    if not 1 <= per_item <= MAX_PER_ITEM or (classes and not operators_for(classes)):
        messages.error(request, f"Not seeded: variants per item must be 1 to {MAX_PER_ITEM}, with a known class.")
        return redirect("labelling:goldset_detail", name)
    enqueue("labelling.mutations_seed", gold_set_id=gold_set.pk, per_item=per_item, classes=classes)
    messages.info(request, f"Seeding mutations of {gold_set.name}: proposals appear in the queue as they pass.")
    return redirect("labelling:goldset_detail", name)
