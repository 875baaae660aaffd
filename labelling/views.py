"""Pages of the labelling app. HTTP only: role check, form, one service or selector, render."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from config.exports import csv_response, json_response, records_csv_response
from config.roles import ADMIN, LABELLER, ML_ENGINEER, has_role, role_required
from labelling import selectors, services
from labelling.agreement_report import agreement_report, agreement_rows, disagreement_rows
from labelling.audit import audit_at_publish, audit_summary
from labelling.forms import AdjudicationForm, BrowseForm, ImportForm, InvariantsForm, LabelForm, PublishForm
from labelling.goldset_io import GoldImportError, export_lines
from labelling.models import ErrorClass, GoldSet, GoldSetVersion, Query, QuerySource
from labelling.preview import preview_query_for, query_preview
from labelling.queue_orders import queue_order_choices, queue_order_from_request

AUDIT_SCOPE = "audit"  # the queue of audit samples alone, outside any gold set
# Keys 1..9, 0 pick an error class after `w`.
ERROR_CLASS_KEYS = list(zip([*"123456789", "0"], ErrorClass.choices, strict=True))


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def index(request):
    """List gold sets with their latest versions."""
    gold_sets = GoldSet.objects.prefetch_related("versions").order_by("name")
    audit_waiting = Query.objects.filter(source=QuerySource.AUDIT, label_count=0).count()
    return render(request, "labelling/index.html", {"gold_sets": gold_sets, "audit_waiting": audit_waiting})


# --- The labelling queue ------------------------------------------------------------------


def _scope(scope: str) -> GoldSet | None:
    return None if scope == AUDIT_SCOPE else get_object_or_404(GoldSet, name=scope)


def _query_in_scope(gold_set: GoldSet | None, pk: int) -> Query:
    query = get_object_or_404(Query.objects.select_related("warehouse"), pk=pk)
    if query.source != QuerySource.AUDIT and (gold_set is None or query.gold_set_id != gold_set.pk):
        raise Http404("This item is not in this queue.")
    return query


def _render_item(request, scope: str, gold_set: GoldSet | None, query: Query | None, status=200, invariants_form=None):
    """Render the item page, or only its `item` partial for htmx (and point the URL at it)."""
    context = {
        "scope": scope,
        "gold_set": gold_set,
        "query": query,
        "error_class_keys": ERROR_CLASS_KEYS,
        "progress": selectors.queue_progress(user=request.user, gold_set=gold_set) if gold_set else None,
        "queue_order": queue_order_from_request(request),
        "queue_orders": queue_order_choices(),
    }
    if query is not None:
        context["my_label"] = selectors.queue_current_label(user=request.user, query=query)
        context["columns"] = selectors.warehouse_columns(query=query)
        context["invariants_form"] = invariants_form or InvariantsForm(initial={"invariants": query.invariants or None})
    template = "labelling/queue.html#item" if request.htmx else "labelling/queue.html"
    response = render(request, template, context, status=status)
    if request.htmx and query is not None:
        response["HX-Push-Url"] = reverse("labelling:queue_item", args=[scope, query.pk])
    elif request.htmx:
        response["HX-Push-Url"] = reverse("labelling:queue", args=[scope])
    return response


@role_required(LABELLER)
def queue(request, scope):
    """Open the queue at the next item waiting for this labeller (or say that none is left)."""
    gold_set = _scope(scope)
    query = selectors.queue_next_item(user=request.user, gold_set=gold_set, order=queue_order_from_request(request))
    if query is not None:
        return redirect("labelling:queue_item", scope, query.pk)
    return _render_item(request, scope, gold_set, None)


@role_required(LABELLER)
def queue_item(request, scope, pk):
    """Show one item: question, highlighted SQL, the columns it touches, its preview panel."""
    gold_set = _scope(scope)
    return _render_item(request, scope, gold_set, _query_in_scope(gold_set, pk))


@require_POST
@role_required(LABELLER)
def queue_label(request, scope, pk):
    """Save the labeller's label on this item and move on to the next one."""
    gold_set = _scope(scope)
    query = _query_in_scope(gold_set, pk)
    data = request.POST.copy()
    if data.get("error_class") and not data.get("decision"):
        # An error-class button submitted by the browser itself (htmx had not yet taken
        # over the freshly swapped item, or scripts are off) names only the class.
        data["decision"] = "wrong"
    form = LabelForm(data)
    if not form.is_valid():
        return _render_item(request, scope, gold_set, query, status=422)
    services.label_create(query=query, labeller=request.user, **form.cleaned_data)
    following = selectors.queue_following_item(
        user=request.user, gold_set=gold_set, query=query, order=queue_order_from_request(request)
    )
    if not request.htmx:
        return (
            redirect("labelling:queue_item", scope, following.pk) if following else redirect("labelling:queue", scope)
        )
    return _render_item(request, scope, gold_set, following)


@role_required(LABELLER)
def queue_step(request, scope, pk, direction):
    """Go to the previous item (k) or the next one (j) in the labeller's history."""
    gold_set = _scope(scope)
    query = _query_in_scope(gold_set, pk)
    if direction == "prev":
        target = selectors.queue_previous_item(user=request.user, gold_set=gold_set, query=query) or query
    else:
        target = selectors.queue_following_item(
            user=request.user, gold_set=gold_set, query=query, order=queue_order_from_request(request)
        )
    if not request.htmx:
        return redirect("labelling:queue_item", scope, target.pk) if target else redirect("labelling:queue", scope)
    return _render_item(request, scope, gold_set, target)


@require_POST
@role_required(LABELLER)
def queue_undo(request, scope):
    """Retract the labeller's last label in this queue and return to that item."""
    gold_set = _scope(scope)
    last = selectors.queue_last_label(user=request.user, gold_set=gold_set)
    if last is None:
        messages.info(request, "Nothing to undo.")
        return redirect("labelling:queue", scope)
    services.label_undo(label=last)
    if not request.htmx:
        return redirect("labelling:queue_item", scope, last.query_id)
    return _render_item(request, scope, gold_set, last.query)


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def preview(request, pk):
    """Run the item (and its reference SQL) read-only and show the first rows and the comparison."""
    query = preview_query_for(user=request.user, pk=pk)
    return render(request, "labelling/preview.html", {"query": query, "preview": query_preview(query=query)})


# --- Gold sets, versions, agreement ----------------------------------------------------------


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def goldset_detail(request, name):
    """Show a gold set's versions, with export, diff and (for engineers) publish."""
    gold_set = get_object_or_404(GoldSet, name=name)
    versions = gold_set.versions.filter(is_frozen=True).select_related("published_by").order_by("-number")
    can_manage = has_role(request.user, ML_ENGINEER, ADMIN)
    return render(
        request,
        "labelling/goldset_detail.html",
        {"gold_set": gold_set, "versions": versions, "can_manage": can_manage, "publish_form": PublishForm()},
    )


@require_POST
@role_required(ML_ENGINEER, ADMIN)
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
    messages.success(
        request, f"Published {version} under {resolve}: {version.items.count()} items, {version.left_out_summary}."
    )
    audit = audit_at_publish(version=version)
    if audit is not None and audit.findings:
        messages.warning(request, f"Audit of {version}: {audit_summary(findings=audit.findings)} (see Audit below).")
    return redirect("labelling:version_browse", name, version.number)


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def version_diff(request, name):
    """Show what changed between two versions of a gold set (?old=N&new=M)."""
    gold_set = get_object_or_404(GoldSet, name=name)
    try:
        old_number, new_number = int(request.GET["old"]), int(request.GET["new"])
    except (KeyError, ValueError):
        messages.error(request, "Pick two versions to compare.")
        return redirect("labelling:goldset_detail", name)
    old = get_object_or_404(GoldSetVersion, gold_set=gold_set, number=old_number)
    new = get_object_or_404(GoldSetVersion, gold_set=gold_set, number=new_number)
    diff = selectors.version_diff(old=old, new=new)
    return render(request, "labelling/version_diff.html", {"gold_set": gold_set, "old": old, "new": new, "diff": diff})


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def version_export(request, pk, fmt):
    """Download a version as JSONL or CSV, streamed."""
    if fmt not in ("jsonl", "csv"):
        raise Http404("Export as .jsonl or .csv.")
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=pk, is_frozen=True)
    content_type = "application/x-ndjson" if fmt == "jsonl" else "text/csv"
    response = StreamingHttpResponse(export_lines(version, fmt), content_type=f"{content_type}; charset=utf-8")
    filename = f"{version.gold_set.name}-v{version.number}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _agreement_scope(request, name) -> tuple[GoldSet, GoldSetVersion | None]:
    gold_set = get_object_or_404(GoldSet, name=name)
    number = request.GET.get("version")
    if not number:
        return gold_set, None
    if not number.isdigit():
        raise Http404("No such version.")
    return gold_set, get_object_or_404(GoldSetVersion, gold_set=gold_set, number=int(number), is_frozen=True)


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def agreement(request, name):
    """Show agreement per labeller pair, over all raters and per error class, and the items that disagree."""
    gold_set, version = _agreement_scope(request, name)
    report = agreement_report(gold_set=gold_set, version=version)
    context = {
        "gold_set": gold_set,
        "version": version,
        "report": report,
        "disagreements": disagreement_rows(gold_set=gold_set, version=version),
        "can_adjudicate": has_role(request.user, ML_ENGINEER, ADMIN),
        "form": AdjudicationForm(),
        "versions": gold_set.versions.filter(is_frozen=True).order_by("-number"),
    }
    return render(request, "labelling/agreement.html", context)


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def agreement_export(request, name, fmt):
    """Download the agreement figures (the same dict as `agreement_report --format json`)."""
    gold_set, version = _agreement_scope(request, name)
    report = agreement_report(gold_set=gold_set, version=version)
    stem = f"{gold_set.name}-agreement" + (f"-v{version.number}" if version else "")
    if fmt == "json":
        return json_response(f"{stem}.json", report)
    if fmt == "csv":
        return csv_response(f"{stem}.csv", *agreement_rows(report))
    raise Http404("Export as .json or .csv.")


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def disagreements_export(request, name, fmt):
    """Download the items whose labellers disagree, with their labels and adjudication."""
    gold_set, version = _agreement_scope(request, name)
    records = [
        {
            "id": row["query"].external_id,
            "question": row["query"].question,
            "labels": dict(row["ratings"]),
            "adjudication": (
                f"{row['adjudication'].decision} {row['adjudication'].error_class}".strip()
                if row["adjudication"]
                else None
            ),
            "adjudication_reason": row["adjudication"].reason if row["adjudication"] else None,
        }
        for row in disagreement_rows(gold_set=gold_set, version=version)
    ]
    stem = f"{gold_set.name}-disagreements"
    if fmt == "json":
        return json_response(f"{stem}.json", records)
    if fmt == "csv":
        columns = ["id", "question", "labels", "adjudication", "adjudication_reason"]
        return records_csv_response(f"{stem}.csv", columns, records)
    raise Http404("Export as .json or .csv.")


# --- Browsing a version --------------------------------------------------------------------

BROWSE_PAGE_SIZE = 50
ITEM_COLUMNS = ["id", "question", "sql", "label", "error_class"]
LABEL_COLUMNS = ["labeller", "labeller_label", "labeller_error_class", "label_source", "current", "labelled_at"]


def _version(name: str, number: int) -> GoldSetVersion:
    return get_object_or_404(
        GoldSetVersion.objects.select_related("gold_set", "published_by"),
        gold_set__name=name,
        number=number,
        is_frozen=True,
    )


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def version_browse(request, name, number):
    """List a version's items with search, filters and pages; each with its labels, adjudication and history."""
    version = _version(name, number)
    form = BrowseForm(request.GET or None)
    filters = selectors.BrowseFilters.from_query(form.cleaned_data if form.is_valid() else {})
    page = Paginator(selectors.version_items(version=version, filters=filters), BROWSE_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    details = selectors.item_details(query_ids=[item.query_id for item in page])
    rows = [{"item": item, **details[item.query_id]} for item in page]
    context = {
        "version": version,
        "gold_set": version.gold_set,
        "form": form,
        "page": page,
        "rows": rows,
        "filter_query": urlencode(filters.as_query()),
    }
    return render(request, "labelling/version_browse.html", context)


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def version_items_export(request, name, number, fmt):
    """Download the (filtered) items of a version with every label: JSON nested, CSV a row per label."""
    version = _version(name, number)
    form = BrowseForm(request.GET or None)
    filters = selectors.BrowseFilters.from_query(form.cleaned_data if form.is_valid() else {})
    records = selectors.version_item_records(version=version, filters=filters)
    stem = f"{version.gold_set.name}-v{version.number}-items"
    if fmt == "json":
        return json_response(f"{stem}.json", list(records))
    if fmt != "csv":
        raise Http404("Export as .json or .csv.")

    def rows():
        for record in records:
            item = [record[name] for name in ITEM_COLUMNS]
            for label in record["labels"] or [{}]:
                yield [
                    *item,
                    label.get("labeller"),
                    label.get("label"),
                    label.get("error_class"),
                    label.get("source"),
                    label.get("current"),
                    label.get("at"),
                    "; ".join(
                        f"{a['label']} {a['error_class'] or ''} by {a['adjudicator']}" for a in record["adjudications"]
                    ),
                ]

    return csv_response(f"{stem}.csv", [*ITEM_COLUMNS, *LABEL_COLUMNS, "adjudications"], rows())


@require_POST
@role_required(ML_ENGINEER, ADMIN)
def adjudicate(request, pk):
    """Record an adjudicator's final label for a disagreeing item, with the reason."""
    query = get_object_or_404(Query.objects.select_related("gold_set"), pk=pk)
    form = AdjudicationForm(request.POST)
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


@role_required(ML_ENGINEER, ADMIN)
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
            version = services.goldset_import(
                path_or_file=data["file"],
                gold_set_name=data["gold_set"],
                fmt=data["format"] or None,
                user=request.user,
                resolve=data["resolve"] or "manual",
                positive_means=data["positive_means"] or "correct",
                create_labellers=data["create_labellers"],
            )
        except (GoldImportError, ValidationError, UnicodeDecodeError) as exc:
            context["import_error"] = str(exc)
        else:
            context["version"] = version
            context["summary"] = version.import_summary
            if not request.htmx:
                messages.success(request, f"Imported and published {version}: {version.import_summary.describe()}")
                return redirect("labelling:version_browse", version.gold_set.name, version.number)
    template = "labelling/import.html#result" if request.htmx else "labelling/import.html"
    # htmx swaps only 2xx answers, so an import error travels as a 200 with the message.
    failed = bool(context.get("import_error"))
    response = render(request, template, context, status=422 if failed and not request.htmx else 200)
    if request.method == "POST":
        response["X-Import-Status"] = "failed" if failed else "imported"
    return response
