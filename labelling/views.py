from django.shortcuts import render

from config.roles import ADMIN, LABELLER, ML_ENGINEER, role_required
from labelling.models import GoldSet


@role_required(LABELLER, ML_ENGINEER, ADMIN)
def index(request):
    """List gold sets with their latest versions."""
    gold_sets = GoldSet.objects.prefetch_related("versions").order_by("name")
    return render(request, "labelling/index.html", {"gold_sets": gold_sets})
