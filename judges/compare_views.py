"""The "Compare versions" page: two judge versions on the items both judged (`judges.compare`)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, render

from config.params import number_param
from config.roles import VIEW_JUDGES, permission_required
from judges.calibration_data import load_calibration
from judges.compare import comparison_from_data
from labelling.models import GoldSetVersion
from labelling.split_models import SPLIT_ALL, SPLIT_CHOICES, GoldSetSplit
from labelling.splits import split_part_check


@permission_required(VIEW_JUDGES)
def compare_page(request, version_id: int):
    """Show B − A with paired intervals, McNemar and the differing items; pick A, B, split and seed."""
    version = get_object_or_404(GoldSetVersion.objects.select_related("gold_set"), pk=version_id)
    split = request.GET.get("split") or SPLIT_ALL
    seed = number_param(request.GET.get("seed")) or 0
    context = {"version": version, "split": split, "seed": seed, "splits": SPLIT_CHOICES}
    context["has_split"] = GoldSetSplit.objects.filter(version=version).exists()
    try:
        split_part_check(version, split)
        data = load_calibration(gold_set_version=version, split=split)
    except ValueError as exc:
        context["error"] = str(exc)
        return render(request, "judges/compare.html", context, status=400)
    refs = [f"{judge.name}:{judge.number}" for judge in data.judges]
    context["judges"] = list(zip(refs, data.judges, strict=True))
    a = request.GET.get("a") or (refs[0] if refs else "")
    b = request.GET.get("b") or (refs[1] if len(refs) > 1 else "")
    context.update(a=a, b=b)
    if len(refs) < 2:
        context["error"] = "Two judge versions with verdicts on this version are needed for a comparison."
        return render(request, "judges/compare.html", context)
    try:
        context["result"] = comparison_from_data(data, a, b, seed=seed)
    except ValueError as exc:
        context["error"] = str(exc)
        return render(request, "judges/compare.html", context, status=400)
    return render(request, "judges/compare.html", context)
