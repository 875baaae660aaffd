import json

from django import forms

from labelling.forms import label_rule_errors
from labelling.taxonomy import class_choices
from triage.models import TOKEN_SCOPES, ApiToken, Resolution, TriagePolicy
from triage.policy import POLICY_FIELDS, live_judges_refusal
from triage.queue import RESOLUTION_TO_LABEL


class DecisionForm(forms.Form):
    resolution = forms.ChoiceField(choices=Resolution.choices)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Live items use Docket's default taxonomy (they belong to no gold set).
        self.fields["error_class"] = forms.ChoiceField(choices=[("", "—"), *class_choices(None)], required=False)

    def clean(self):
        data = super().clean()
        decision = RESOLUTION_TO_LABEL.get(data.get("resolution"))
        if decision != "wrong":
            data["error_class"] = ""
        # The label rule (`Label.clean()`): confirmed wrong is a wrong label, so it needs a class.
        label_rule_errors(self, decision, data.get("error_class") or "")
        return data


class ReopenForm(forms.Form):
    note = forms.CharField(required=False, max_length=2000)


class ScopesField(forms.MultipleChoiceField):
    """Token scopes as checkboxes; a script may also post them as one JSON list ('["ingest"]')."""

    def __init__(self, **kwargs):
        super().__init__(
            choices=[(scope, scope) for scope in TOKEN_SCOPES],
            widget=forms.CheckboxSelectMultiple,
            help_text="At least one: a token may do only what it lists.",
            **kwargs,
        )

    def to_python(self, value):
        if isinstance(value, list | tuple) and len(value) == 1 and str(value[0]).lstrip().startswith("["):
            value = value[0]
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise forms.ValidationError("Scopes are not a JSON list of scope names.") from exc
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(scope, str) for scope in value):
            raise forms.ValidationError("Scopes must be scope names.")
        return [str(scope) for scope in value]


class ApiTokenForm(forms.ModelForm):
    """The admin's form for a new token: client, name and at least one known scope."""

    scopes = ScopesField()

    class Meta:
        model = ApiToken
        fields = ["client", "name", "scopes"]


class TriagePolicyForm(forms.ModelForm):
    """The admin's form for the next policy version; refuses what the pipeline could never run.

    A k-of-n rule its judges could never reach is refused on the k field, a judge that cannot
    judge live traffic (`triage/policy.py` `live_judges_refusal`) on the judges field.
    """

    class Meta:
        model = TriagePolicy
        fields = ["judge_versions", *POLICY_FIELDS, "note"]
        help_texts = {"note": "Why this version: saving publishes a new one, so this starts empty."}
        # Checkboxes, not the admin's two-box selector: a policy has a few judges, and that
        # selector's icons carry an aria-label axe refuses (aria-prohibited-attr, serious).
        widgets = {"judge_versions": forms.CheckboxSelectMultiple}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["note"] = ""  # the note is the new version's own, never the previous one's

    def clean(self):
        data = super().clean()
        if "judge_versions" in data:
            # The model's clean() (run next, by _post_clean) checks k against these judges.
            self.instance.pending_judge_count = len(data["judge_versions"])
        return data

    def clean_judge_versions(self):
        versions = self.cleaned_data["judge_versions"]
        if problem := live_judges_refusal(versions):
            raise forms.ValidationError(problem)
        return versions
