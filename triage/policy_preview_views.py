"""The policy change page's preview: the draft in the admin's form, re-decided over the last 7 days."""

from django.shortcuts import render
from django.views.decorators.http import require_POST

from config.roles import permission_required
from triage.forms import TriagePolicyForm
from triage.policy_preview import draft_from_form, policy_preview

PUBLISH_POLICY = "triage.add_triagepolicy"


@require_POST
@permission_required(PUBLISH_POLICY)
def policy_preview_fragment(request):
    """Answer the change form's fields with what that policy would have flagged (nothing is saved)."""
    form = TriagePolicyForm(request.POST)
    preview = policy_preview(draft=draft_from_form(form.cleaned_data)) if form.is_valid() else None
    return render(request, "admin/triage/triagepolicy/_preview.html", {"form": form, "preview": preview})
