"""The admins' taxonomy pages: every taxonomy, and one taxonomy's classes to add, rename, retire or map.

HTTP only: role check, form, one service of `labelling.taxonomy`, redirect. Classes are never
deleted; a rename keeps the old name as an alias; retiring stops offering a class.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from config.roles import MANAGE_TAXONOMIES, permission_required
from labelling import taxonomy as services
from labelling.taxonomy_forms import ClassAddForm, ClassMapForm, ClassRenameForm
from labelling.taxonomy_models import Taxonomy, TaxonomyAlias, TaxonomyClass


@permission_required(MANAGE_TAXONOMIES)
def taxonomy_list(request):
    """List the taxonomies with their version, classes and gold sets."""
    services.taxonomy_default()
    taxonomies = Taxonomy.objects.annotate(class_count=Count("classes", distinct=True)).prefetch_related("gold_sets")
    return render(request, "labelling/taxonomies.html", {"taxonomies": taxonomies})


@permission_required(MANAGE_TAXONOMIES)
def taxonomy_detail(request, name):
    """Show one taxonomy's classes by category, its other names and its versions, with the edit forms."""
    taxonomy = get_object_or_404(Taxonomy, name=name)
    context = {
        "taxonomy": taxonomy,
        "classes": TaxonomyClass.objects.filter(taxonomy=taxonomy).order_by("position", "id"),
        "aliases": TaxonomyAlias.objects.filter(taxonomy=taxonomy).select_related("target"),
        "versions": taxonomy.versions.order_by("-number")[:20],
        "add_form": ClassAddForm(),
        "map_form": ClassMapForm(taxonomy=taxonomy),
    }
    return render(request, "labelling/taxonomy.html", context)


@require_POST
@permission_required(MANAGE_TAXONOMIES)
def taxonomy_class_add(request, name):
    taxonomy = get_object_or_404(Taxonomy, name=name)
    form = ClassAddForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        _apply(request, lambda: services.taxonomy_classes_add(taxonomy=taxonomy, names=[data["name"]],
                                                              category=data["category"],
                                                              description=data["description"]),
               f"Added {data['name']}.")  # fmt: skip
    else:
        messages.error(request, f"Not added: {form.errors.as_text()}")
    return redirect("labelling:taxonomy", name)


@require_POST
@permission_required(MANAGE_TAXONOMIES)
def taxonomy_class_rename(request, name, pk):
    row = get_object_or_404(TaxonomyClass, taxonomy__name=name, pk=pk)
    form = ClassRenameForm(request.POST)
    if form.is_valid():
        new_name = form.cleaned_data["name"]
        old_name = row.name
        _apply(request, lambda: services.taxonomy_class_rename(taxonomy_class=row, new_name=new_name),
               f"Renamed {old_name} to {new_name}; {old_name} is kept as another name of it.")  # fmt: skip
    else:
        messages.error(request, f"Not renamed: {form.errors.as_text()}")
    return redirect("labelling:taxonomy", name)


@require_POST
@permission_required(MANAGE_TAXONOMIES)
def taxonomy_class_retire(request, name, pk):
    row = get_object_or_404(TaxonomyClass, taxonomy__name=name, pk=pk)
    retire = request.POST.get("retired", "1") != "0"
    _apply(request, lambda: services.taxonomy_class_retire(taxonomy_class=row, retired=retire),
           f"{'Retired' if retire else 'Restored'} {row.name}.")  # fmt: skip
    return redirect("labelling:taxonomy", name)


@require_POST
@permission_required(MANAGE_TAXONOMIES)
def taxonomy_alias_add(request, name):
    taxonomy = get_object_or_404(Taxonomy, name=name)
    form = ClassMapForm(request.POST, taxonomy=taxonomy)
    if form.is_valid():
        data = form.cleaned_data
        _apply(request, lambda: services.taxonomy_alias_add(taxonomy=taxonomy, name=data["name"],
                                                            target=data["target"]),
               f"{data['name']} now maps to {data['target'].name}.")  # fmt: skip
    else:
        messages.error(request, f"Not mapped: {form.errors.as_text()}")
    return redirect("labelling:taxonomy", name)


def _apply(request, change, success: str) -> None:
    try:
        change()
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, success)
