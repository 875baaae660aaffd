from django import forms

from labelling.models import ErrorClass
from triage.models import Resolution, TriagePolicy
from triage.policy import POLICY_FIELDS


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


class TriagePolicyForm(forms.ModelForm):
    """The admin's policy form: a k-of-n rule its judges could never reach is refused on the k field."""

    class Meta:
        model = TriagePolicy
        fields = ["judge_versions", *POLICY_FIELDS, "note"]

    def clean(self):
        data = super().clean()
        if "judge_versions" in data:
            # The model's clean() (run next, by _post_clean) checks k against these judges.
            self.instance.pending_judge_count = len(data["judge_versions"])
        return data
