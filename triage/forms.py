from django import forms

from labelling.models import ErrorClass
from triage.models import Resolution, TriagePolicy
from triage.policy import POLICY_FIELDS, replay_judges_refusal


class DecisionForm(forms.Form):
    resolution = forms.ChoiceField(choices=Resolution.choices)
    error_class = forms.ChoiceField(choices=[("", "—")] + list(ErrorClass.choices), required=False)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean(self):
        data = super().clean()
        if data.get("resolution") == Resolution.CONFIRMED_WRONG and not data.get("error_class"):
            self.add_error("error_class", "Confirmed wrong needs an error class.")
        return data


class ReopenForm(forms.Form):
    note = forms.CharField(required=False, max_length=2000)


class TriagePolicyAdminForm(forms.ModelForm):
    """The admin's form for the next policy version; refuses what the pipeline could never run."""

    class Meta:
        model = TriagePolicy
        fields = ["judge_versions", *POLICY_FIELDS, "note"]

    def clean_judge_versions(self):
        versions = self.cleaned_data["judge_versions"]
        if problem := replay_judges_refusal(versions):
            raise forms.ValidationError(problem)
        return versions
