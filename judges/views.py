import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from config.params import bad_request_page, number_param
from config.roles import (
    ADD_JUDGE,
    CHANGE_JUDGE,
    CHANGE_RUN,
    START_RUN,
    VIEW_JUDGES,
    VIEW_RUNS,
    VIEW_VERDICT,
    permission_check,
    permission_required,
)
from judges import drafts, selectors, services
from judges.example_candidates import example_candidates_get
from judges.forms import (
    DraftExtrasForm,
    JudgeCloneForm,
    JudgeCreateForm,
    JudgeVersionForm,
    RunResumeForm,
    RunStartForm,
)
from judges.models import CalibrationRun, Judge, JudgeVersion, Verdict
from judges.readable_json import readable_json
from judges.run_estimate import run_start_any_simulated, run_start_estimate, run_start_initial
from labelling.models import GoldSetVersion

# --- Object access: one helper per kind of object, each raising 403 or 404 -----------------


def _get_judge_for_user(request, pk) -> Judge:
    """Return a judge the user may work on (ML engineers), else 403; 404 if there is none."""
    permission_check(request.user, VIEW_JUDGES)
    return selectors.judge_get(pk=pk)


def _get_run_for_user(request, pk) -> CalibrationRun:
    """Return a calibration run the user may see and steer (ML engineers), else 403 / 404."""
    permission_check(request.user, VIEW_RUNS)
    return get_object_or_404(CalibrationRun.objects.select_related("gold_set_version__gold_set"), pk=pk)


def _get_verdict_for_user(request, pk) -> Verdict:
    """Return a verdict the user may read, else 403 / 404.

    ML engineers read every verdict. Analysts read live verdicts only, the ones their triage
    items link to: a calibration verdict carries a gold set's items and full prompts, which
    are the ML engineers' (and a 404 does not say that it exists).
    """
    permission_check(request.user, VIEW_VERDICT)
    verdict = get_object_or_404(
        Verdict.objects.select_related("judge_version__judge", "query__warehouse", "run", "prompt_prefix"), pk=pk
    )
    if verdict.run_id is not None and not request.user.has_perm(VIEW_RUNS):
        raise Http404("No live verdict has this id.")
    return verdict


def _form_errors_from(form, exc: ValidationError):
    if hasattr(exc, "error_dict"):
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc.messages)


@permission_required(VIEW_JUDGES)
def index(request):
    """List judges and recent calibration runs."""
    return render(request, "judges/index.html", {"rows": selectors.judges_index_rows(), "runs": selectors.run_list()})


@permission_required(ADD_JUDGE)
def judge_create(request):
    """Register a judge with its first version."""
    form = JudgeCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        try:
            judge = services.judge_create(
                name=data.pop("name"), description=data.pop("description"), user=request.user, **data
            )
        except ValidationError as exc:
            _form_errors_from(form, exc)
        else:
            return redirect("judges:judge_detail", pk=judge.pk)
    return render(request, "judges/judge_form.html", {"form": form, "title": "New judge"})


@permission_required(VIEW_JUDGES)
def judge_detail(request, pk):
    """Show a judge: the chosen version's full prompt, and every version's metrics per gold-set version."""
    judge = _get_judge_for_user(request, pk)
    versions = selectors.versions_with_provenance(judge.versions.all())
    shown = next(
        (v for v in versions if str(v.number) == request.GET.get("version")), versions[0] if versions else None
    )
    context = {
        "judge": judge,
        "versions": versions,
        "shown": shown,
        "prompt": selectors.judge_version_prompt_get(judge_version=shown) if shown else None,
        "metrics": selectors.judge_version_metrics_list(judge=judge),
        "runs": selectors.judge_runs_list(judge=judge),
        "clone_form": JudgeCloneForm(),
    }
    return render(request, "judges/judge_detail.html", context)


@permission_required(CHANGE_JUDGE)
def judge_edit(request, pk):
    """Edit a judge: review the diff, try the draft on one item, save it as a new version with its examples."""
    judge = _get_judge_for_user(request, pk)
    latest = judge.latest_version
    form = JudgeVersionForm(request.POST or None, initial=selectors.judge_edit_initial(latest))
    extras = DraftExtrasForm(request.POST or None, carried=selectors.example_values_of(latest))
    context = {"form": form, "extras": extras, "judge": judge, "title": f"Edit {judge.name} (new version)"}
    action = request.POST.get("confirm")
    if request.method == "POST" and form.is_valid() and extras.is_valid():
        proposed = selectors.prompt_as_stored(latest, form.cleaned_data)
        context["diff"] = selectors.judge_version_form_diff_get(current=latest, proposed=proposed) if latest else None
        draft = {"judge": judge, "user": request.user, "fields": proposed, "examples": extras.cleaned_data["examples"]}
        try:
            if action == "try":
                extras.try_item_required()
                context["tried"] = drafts.judge_draft_try(**draft, item=extras.cleaned_data["try_item"])
            elif action == "save" or latest is None:
                version = drafts.judge_version_save(**draft)
                messages.success(request, f"Saved as {version} with {version.examples.count()} worked example(s).")
                return redirect("judges:judge_detail", pk=judge.pk)
        except ValidationError as exc:
            _form_errors_from(form, exc)
    gold = number_param(request.POST.get("gold") or request.GET.get("gold") or "")
    context["candidates"] = example_candidates_get(judge=judge, gold_set_version_id=gold)
    return render(request, "judges/judge_form.html", context)


@require_POST
@permission_required(ADD_JUDGE)
def judge_clone(request, pk):
    judge = _get_judge_for_user(request, pk)
    form = JudgeCloneForm(request.POST)
    if form.is_valid():
        try:
            clone = services.judge_clone(judge=judge, name=form.cleaned_data["name"], user=request.user)
        except ValidationError as exc:
            messages.error(request, "; ".join(exc.messages))
        else:
            return redirect("judges:judge_detail", pk=clone.pk)
    else:
        messages.error(request, "; ".join(e for errors in form.errors.values() for e in errors))
    return redirect("judges:judge_detail", pk=judge.pk)


@permission_required(VIEW_JUDGES)
def judge_compare(request, pk):
    """Compare two versions of a judge: their settings, and item by item on a gold-set version."""
    judge = _get_judge_for_user(request, pk)
    versions = list(judge.versions.all())
    for side in ("left", "right"):
        if request.GET.get(side) and number_param(request.GET[side]) is None:
            return bad_request_page(request, f"{side}={request.GET[side]!r} is not a version number (1, 2, …).")
    left_number = request.GET.get("left") or (versions[1].number if len(versions) > 1 else versions[0].number)
    right_number = request.GET.get("right") or versions[0].number
    left = get_object_or_404(JudgeVersion, judge=judge, number=left_number)
    right = get_object_or_404(JudgeVersion, judge=judge, number=right_number)
    gold_versions = list(
        GoldSetVersion.objects.filter(calibration_runs__judge_versions__in=[left, right])
        .select_related("gold_set")
        .distinct()
        .order_by("-pk")
    )
    gold = next(
        (g for g in gold_versions if str(g.pk) == request.GET.get("gold")), gold_versions[0] if gold_versions else None
    )
    context = {
        "judge": judge,
        "versions": versions,
        "left": left,
        "right": right,
        "rows": selectors.judge_version_diff_get(left=left, right=right),
        "gold_versions": gold_versions,
        "gold": gold,
        "items": selectors.judge_version_item_diff_get(left=left, right=right, gold_set_version=gold) if gold else None,
    }
    return render(request, "judges/judge_compare.html", context)


def verdict_detail(request, pk):
    """Show one verdict's trace: the request as sent, the raw response, usage, cost, retries, endpoint."""
    verdict = _get_verdict_for_user(request, pk)
    trace = selectors.verdict_trace_get(verdict=verdict)
    context = {
        "verdict": verdict,
        "trace": trace,
        "request_json": json.dumps(trace["request"], indent=2, ensure_ascii=False) if trace["request"] else "",
        "request_readable": readable_json(trace["request"]) if trace["request"] else "",
        "response_json": json.dumps(trace["response"], indent=2, ensure_ascii=False) if trace["response"] else "",
        "response_readable": readable_json(trace["response"]) if trace["response"] else "",
    }
    return render(request, "judges/judge_verdict.html", context)


@permission_required(START_RUN)
def run_start(request):
    """Start a calibration run: judge versions x gold-set version x repeats."""
    form = RunStartForm(request.POST or None, initial=run_start_initial(request.GET))
    if request.method == "POST" and form.is_valid():
        try:
            run = services.calibration_run_start(**form.cleaned_data, user=request.user)
        except ValidationError as exc:
            _form_errors_from(form, exc)
        else:
            return redirect("judges:run_detail", pk=run.pk)
    context = {"form": form, "estimate": run_start_estimate(form), "any_simulated": run_start_any_simulated(form)}
    return render(request, "judges/run_start.html", context)


@permission_required(START_RUN)
def run_estimate(request):
    """The estimate of calls, cost and time for the run form's current choices (htmx, on change)."""
    form = RunStartForm(request.GET)
    return render(request, "judges/run_start.html#estimate", {"estimate": run_start_estimate(form)})


@permission_required(VIEW_RUNS)
def run_detail(request, pk):
    """Show a run with its live progress; htmx polls the progress partial while it is active."""
    run = _get_run_for_user(request, pk)
    context = {"run": run, "progress": selectors.run_progress_get(run=run), "resume_form": RunResumeForm()}
    if request.htmx:
        response = render(request, "judges/run_detail.html#progress", context)
        if not context["progress"]["active"]:
            # The run just ended: reload once so the counts and the cancel/resume buttons match it.
            response["HX-Refresh"] = "true"
        return response
    context.update(counts=selectors.run_version_counts_get(run=run), errors=selectors.run_errors_list(run=run))
    return render(request, "judges/run_detail.html", context)


@require_POST
@permission_required(CHANGE_RUN)
def run_cancel(request, pk):
    run = _get_run_for_user(request, pk)
    try:
        services.calibration_run_cancel(run=run)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect("judges:run_detail", pk=run.pk)


@require_POST
@permission_required(CHANGE_RUN)
def run_resume(request, pk):
    run = _get_run_for_user(request, pk)
    form = RunResumeForm(request.POST)
    if form.is_valid():
        try:
            services.calibration_run_resume(run=run, spend_cap_usd=form.cleaned_data["spend_cap_usd"])
        except ValidationError as exc:
            messages.error(request, "; ".join(exc.messages))
    return redirect("judges:run_detail", pk=run.pk)
