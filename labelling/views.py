"""Pages of the labelling app: gold sets, versions, agreement, adjudication, import.

HTTP only: role check, form, one service or selector, render. The labeller's queue is in
`labelling.queue_views`, downloads in `labelling.export_views`.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from config.params import number_param
from config.roles import (
    LABEL_QUERIES,
    MANAGE_GOLDSETS,
    VIEW_GOLDSETS,
    VIEW_LABELLER_PROGRESS,
    permission_required,
    users_holding,
)
from labelling import goldset_io, selectors, services
from labelling.agreement_report import agreement_report, disagreement_rows
from labelling.audit import AUDIT_AT_PUBLISH_MAX_ITEMS, goldset_audit_request
from labelling.blind import label_reveals_record, revealed_query_ids, sees_every_label
from labelling.forms import AdjudicationForm, FitnessThresholdsForm, ImportForm, PublishForm
from labelling.goldset_records import GoldImportError
from labelling.lookups import agreement_scope, frozen_version
from labelling.models import GoldSet, GoldSetVersion, Query
from labelling.progress import labeller_progress_list
from labelling.queue_selectors import queue_waiting_for

BROWSE_PAGE_SIZE = 50


@permission_required(VIEW_GOLDSETS)
def index(request):
    """List gold sets with their latest versions; for a labeller, what each queue still holds for them.

    The counts are the queue's own (`queue_waiting_for`), so a set that shows 0 is one whose
    queue says "Nothing left for you".
    """
    gold_sets = GoldSet.objects.prefetch_related("versions").order_by("name")
    can_label = request.user.has_perm(LABEL_QUERIES)
    rows = [
        {
            "gold_set": gs,
            "for_you": queue_waiting_for(user=request.user, gold_set=gs)["gold_set"] if can_label else None,
        }
        for gs in gold_sets
    ]
    context = {
        "rows": rows,
        "can_label": can_label,
        "audit_for_you": queue_waiting_for(user=request.user, gold_set=None)["audit"] if can_label else 0,
        "can_import": request.user.has_perm(MANAGE_GOLDSETS),
        "importers": users_holding(MANAGE_GOLDSETS),
    }
    return render(request, "labelling/index.html", context)


def import_refusal() -> str:
    """Say why a labeller may not import a gold-set file, and who can."""
    who = ", ".join(users_holding(MANAGE_GOLDSETS)) or "no one yet (an admin can give someone the ml_engineer role)"
    return (
        "Importing a gold-set file publishes a new version of the gold set, and every judge's figures name the"
        f" version they were measured on, so ML engineers and admins import, not labellers. Who can import: {who}."
        " Send one of them the file."
    )


@permission_required(VIEW_LABELLER_PROGRESS)
def labeller_progress(request):
    """Show each labeller's labels done today and this week, and agreement with the others."""
    return render(request, "labelling/progress.html", {"rows": labeller_progress_list()})


# --- Gold sets, versions, agreement ----------------------------------------------------------


@permission_required(VIEW_GOLDSETS)
def goldset_detail(request, name):
    """Show a gold set's versions, with export, diff and (for engineers) publish."""
    gold_set = get_object_or_404(GoldSet, name=name)
    versions = gold_set.versions.filter(is_frozen=True).select_related("published_by").order_by("-number")
    can_manage = request.user.has_perm(MANAGE_GOLDSETS)
    context = {"gold_set": gold_set, "versions": versions, "can_manage": can_manage, "publish_form": PublishForm()}
    context["thresholds_form"] = FitnessThresholdsForm.of(gold_set)
    return render(request, "labelling/goldset_detail.html", context)


@require_POST
@permission_required(MANAGE_GOLDSETS)
def goldset_thresholds(request, name):
    """Set the fitness thresholds (gate, monitor) the gold set's judges are held to."""
    gold_set = get_object_or_404(GoldSet, name=name)
    form = FitnessThresholdsForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Thresholds not changed: {form.errors.as_text()}")
        return redirect(reverse("labelling:goldset_detail", args=[name]) + "#fitness-thresholds")
    services.goldset_fitness_thresholds_set(gold_set=gold_set, **form.cleaned_data)
    data = form.cleaned_data
    messages.success(
        request,
        f"Fitness thresholds of {gold_set}: gate when catch's lower bound ≥ {data['catch_lower']:g} and false reject's "
        f"upper bound ≤ {data['false_reject_upper']:g}; monitor when κ's lower bound ≥ {data['kappa_lower']:g}.",
    )
    return redirect(reverse("labelling:goldset_detail", args=[name]) + "#fitness-thresholds")


@require_POST
@permission_required(MANAGE_GOLDSETS)
def goldset_publish(request, name):
    """Publish the gold set's current final labels as a new immutable version."""
    gold_set = get_object_or_404(GoldSet, name=name)
    form = PublishForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Not published: {form.errors.as_text()}")
        return redirect("labelling:goldset_detail", name)
    resolve = form.cleaned_data["resolve"] or "manual"
    version = services.goldset_publish(
        gold_set=gold_set, user=request.user, note=form.cleaned_data["note"], resolve=resolve
    )
    items = version.items.count()
    messages.success(request, f"Published {version} under {resolve}: {items} items, {version.left_out_summary}.")
    if items <= AUDIT_AT_PUBLISH_MAX_ITEMS:
        # A task, not this request: the version page shows its progress, then its findings.
        goldset_audit_request(version=version)
        messages.info(request, f"Auditing {version} in the background: the Audit section below shows its progress.")
    return redirect("labelling:version_browse", name, version.number)


@permission_required(MANAGE_GOLDSETS)
def version_diff(request, name):
    """Show what changed between two versions of a gold set (?old=N&new=M): final labels, so not for labellers."""
    gold_set = get_object_or_404(GoldSet, name=name)
    old_number, new_number = number_param(request.GET.get("old")), number_param(request.GET.get("new"))
    if old_number is None or new_number is None:
        messages.error(request, "Pick two versions to compare.")
        return redirect("labelling:goldset_detail", name)
    old = get_object_or_404(GoldSetVersion, gold_set=gold_set, number=old_number)
    new = get_object_or_404(GoldSetVersion, gold_set=gold_set, number=new_number)
    diff = selectors.version_diff(old=old, new=new)
    shown = [row["query_id"] for rows in (diff.added, diff.removed, diff.changed) for row in rows]
    label_reveals_record(user=request.user, query_ids=shown, shown_on="version_diff")
    return render(request, "labelling/version_diff.html", {"gold_set": gold_set, "old": old, "new": new, "diff": diff})


@permission_required(MANAGE_GOLDSETS)
def agreement(request, name):
    """Show agreement per labeller pair, over all raters and per error class, and the items that disagree.

    For ML engineers and admins (the adjudicators): a labeller would see the others' labels
    before giving their own (`labelling.blind`).
    """
    gold_set, version = agreement_scope(request, name)
    report = agreement_report(gold_set=gold_set, version=version)
    disagreements = disagreement_rows(gold_set=gold_set, version=version)
    label_reveals_record(user=request.user, query_ids=[row["query"].pk for row in disagreements], shown_on="agreement")
    context = {
        "gold_set": gold_set,
        "version": version,
        "report": report,
        "disagreements": disagreements,
        "can_adjudicate": request.user.has_perm(MANAGE_GOLDSETS),
        "adjudicators": users_holding(MANAGE_GOLDSETS),
        "form": AdjudicationForm(gold_set=gold_set),
        "versions": gold_set.versions.filter(is_frozen=True).order_by("-number"),
    }
    return render(request, "labelling/agreement.html", context)


# --- Browsing a version --------------------------------------------------------------------


@permission_required(MANAGE_GOLDSETS)
def version_agreement(request, name, number):
    """Render the version page's agreement line; the page loads it after itself (htmx).

    It reads every label of the version, so the page does not wait for it: the page's own
    cost stays the same with 10,000 items or 100,000 (issue 33, `make bench`'s bench_growth).
    """
    version = frozen_version(name, number)
    report = agreement_report(gold_set=version.gold_set, version=version)
    context = {"version": version, "gold_set": version.gold_set, "agreement": report}
    return render(request, "labelling/_version_agreement.html", context)


@permission_required(VIEW_GOLDSETS)
def version_browse(request, name, number):
    """List a version's items with search, filters and pages; each with its labels, adjudication and history.

    Blind for labellers (`labelling.blind`): an item's final label, labels, adjudication and
    history show only where they may see them (after labelling it, if the gold set allows);
    elsewhere only their own label. Every filter but the text search reads the labels, so a
    labeller searches only.
    """
    version = frozen_version(name, number)
    sees_all = sees_every_label(request.user)
    labellers = selectors.version_labeller_names(version=version) if sees_all else []
    # Metadata is not a label: a blind labeller may filter on it and search, nothing else.
    filters = selectors.version_item_filter(version=version, params=request.GET, labellers=labellers, sees_all=sees_all)
    page = Paginator(selectors.version_item_list(filters=filters), BROWSE_PAGE_SIZE).get_page(request.GET.get("page"))
    ids = [item.query_id for item in page]
    revealed = revealed_query_ids(user=request.user, gold_set=version.gold_set, query_ids=ids)
    details = selectors.item_details_get(query_ids=sorted(revealed))
    label_reveals_record(user=request.user, query_ids=revealed, shown_on="version")
    own = selectors.own_labels_get(user=request.user, query_ids=ids)
    rows = [
        {
            "item": item,
            "revealed": item.query_id in revealed,
            "mine": own.get(item.query_id),
            **details.get(item.query_id, {}),
        }
        for item in page
    ]
    context = {
        "version": version,
        "gold_set": version.gold_set,
        "form": filters.form,
        "page": page,
        "rows": rows,
        "sees_all": sees_all,
        "filter_query": urlencode(filters.params()),
        # Unfiltered, the page's count is the version's: one COUNT over its items, not two.
        "version_items": page.paginator.count if not filters.params() else version.items.count(),
        "metadata_keys": selectors.version_metadata_keys(version=version),
    }
    return render(request, "labelling/version_browse.html", context)


@permission_required(MANAGE_GOLDSETS)
def adjudication(request, pk):
    """Show one item with every label and past adjudication, and the form to give its final label."""
    query = get_object_or_404(Query.objects.select_related("gold_set", "warehouse"), pk=pk)
    label_reveals_record(user=request.user, query_ids=[query.pk], shown_on="adjudication")
    context = {"query": query, "form": AdjudicationForm(gold_set=query.gold_set)}
    context.update(selectors.item_details_get(query_ids=[query.pk])[query.pk])
    return render(request, "labelling/adjudication.html", context)


@require_POST
@permission_required(MANAGE_GOLDSETS)
def adjudicate(request, pk):
    """Record an adjudicator's final label for a disagreeing item, with the reason."""
    query = get_object_or_404(Query.objects.select_related("gold_set"), pk=pk)
    form = AdjudicationForm(request.POST, gold_set=query.gold_set)
    back = reverse("labelling:agreement", args=[query.gold_set.name]) if query.gold_set else reverse("labelling:index")
    if not form.is_valid():
        messages.error(request, f"Not adjudicated: {form.errors.as_text()}")
        return redirect(back)
    services.adjudication_create(query=query, adjudicator=request.user, **form.cleaned_data)
    messages.success(request, f"Adjudicated {query.external_id}.")
    return redirect(back)


def _field_title(form, field: str) -> str:
    if field not in form.fields:
        return ""
    return f"{form.fields[field].label or field.replace('_', ' ').capitalize()}: "


@permission_required(MANAGE_GOLDSETS, refusal=import_refusal)
def goldset_import(request):
    """Upload a JSONL/CSV gold set file; import it in one transaction and publish a version.

    Every outcome says what happened: the reason of a failure (nothing imported), or what
    was created, updated and skipped. htmx gets the result with `X-Import-Status`.
    """
    form = ImportForm(request.POST or None, request.FILES or None)
    context = {"form": form}
    if request.method == "POST" and not form.is_valid():
        context["import_error"] = " ".join(
            f"{_field_title(form, field)}{error}" for field, errors in form.errors.items() for error in errors
        )
    elif request.method == "POST":
        data = form.cleaned_data
        try:
            version = goldset_io.goldset_import(
                path_or_file=data["file"],
                gold_set_name=data["gold_set"],
                fmt=data["format"] or None,
                user=request.user,
                resolve=data["resolve"] or "manual",
                taxonomy_file=data["taxonomy"],
                taxonomy_name=data["taxonomy_name"] or None,
                options=form.parse_options(),
            )
        except (GoldImportError, ValidationError, UnicodeDecodeError) as exc:
            context["import_error"] = str(exc)
        else:
            context["version"] = version
            context["summary"] = version.import_summary
            if not request.htmx:
                said = "Imported and published" if version.published_now else "Nothing changed; still current:"
                messages.success(request, f"{said} {version}: {version.import_summary.describe()}")
                for warning in version.import_summary.warnings():
                    messages.warning(request, f"Warning: {warning}")
                return redirect("labelling:version_browse", version.gold_set.name, version.number)
    template = "labelling/import.html#result" if request.htmx else "labelling/import.html"
    # htmx swaps only 2xx answers, so an import error travels as a 200 with the message.
    failed = bool(context.get("import_error"))
    response = render(request, template, context, status=422 if failed and not request.htmx else 200)
    if request.method == "POST":
        response["X-Import-Status"] = "failed" if failed else "imported"
    return response
