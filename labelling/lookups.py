"""The labelling pages' lookups of a gold set and its versions: each answers 404 when absent."""

from django.http import Http404
from django.shortcuts import get_object_or_404

from config.params import number_param
from labelling.models import GoldSet, GoldSetVersion


def agreement_scope(request, name) -> tuple[GoldSet, GoldSetVersion | None]:
    """Return the gold set and the frozen version `?version=` names (None for the latest)."""
    gold_set = get_object_or_404(GoldSet, name=name)
    number = request.GET.get("version")
    if not number:
        return gold_set, None
    if number_param(number) is None:
        raise Http404("No such version.")
    return gold_set, get_object_or_404(GoldSetVersion, gold_set=gold_set, number=number_param(number), is_frozen=True)


def frozen_version(name: str, number: int) -> GoldSetVersion:
    """Return the published version `number` of the gold set `name`."""
    return get_object_or_404(
        GoldSetVersion.objects.select_related("gold_set", "published_by"),
        gold_set__name=name,
        number=number,
        is_frozen=True,
    )
