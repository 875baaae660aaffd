from django.shortcuts import render

from config.roles import ML_ENGINEER, role_required
from judges.models import CalibrationRun, Judge


@role_required(ML_ENGINEER)
def index(request):
    """List judges and recent calibration runs."""
    judges = Judge.objects.prefetch_related("versions").order_by("name")
    runs = CalibrationRun.objects.select_related("gold_set_version__gold_set")[:20]
    return render(request, "judges/index.html", {"judges": judges, "runs": runs})
