from django import forms

from labelling.invariants import InvariantsInvalid, invariants_validate
from labelling.models import LABEL_ERROR_CLASSES, ErrorClass, LabelDecision, ResolutionPolicy

RESOLVE_CHOICES = [
    (ResolutionPolicy.MANUAL, "manual: adjudications, else labels that agree"),
    (ResolutionPolicy.MAJORITY, "majority: adjudications, else a strict majority of labellers (ties left out)"),
    (ResolutionPolicy.UNANIMOUS_ONLY, "unanimous-only: only items whose labellers all agree"),
]


class LabelForm(forms.Form):
    decision = forms.ChoiceField(choices=LabelDecision.choices)
    error_class = forms.ChoiceField(choices=[("", "—"), *ErrorClass.choices], required=False)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean(self):
        data = super().clean()
        if data.get("decision") == LabelDecision.WRONG and not data.get("error_class"):
            self.add_error("error_class", "A wrong label needs an error class.")
        if data.get("decision") != LabelDecision.WRONG:
            data["error_class"] = ""
        return data


class AdjudicationForm(forms.Form):
    decision = forms.ChoiceField(choices=[(LabelDecision.CORRECT, "Correct"), (LabelDecision.WRONG, "Wrong")])
    error_class = forms.ChoiceField(choices=[("", "—"), *LABEL_ERROR_CLASSES], required=False)
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}))

    def clean(self):
        data = super().clean()
        if data.get("decision") == LabelDecision.WRONG and not data.get("error_class"):
            self.add_error("error_class", "A wrong label needs an error class.")
        if data.get("decision") == LabelDecision.CORRECT:
            data["error_class"] = ""
        return data


class ImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL (one object a line) or CSV with the same columns.")
    gold_set = forms.SlugField(
        max_length=64,
        help_text="Created if it does not exist; extended if it does.",
        error_messages={"invalid": "A gold set name uses only letters, digits, - and _ (no spaces)."},
    )
    format = forms.ChoiceField(choices=[("", "From the file name"), ("jsonl", "JSONL"), ("csv", "CSV")], required=False)
    resolve = forms.ChoiceField(
        choices=RESOLVE_CHOICES, initial=ResolutionPolicy.MANUAL, label="Resolve", required=False
    )
    positive_means = forms.ChoiceField(
        choices=[(LabelDecision.CORRECT, "correct"), (LabelDecision.WRONG, "wrong (the source's 1 means an error)")],
        initial=LabelDecision.CORRECT,
        label="A label of 1/true/yes means",
        required=False,
    )
    create_labellers = forms.BooleanField(required=False, help_text="Create unknown labellers (no password).")


class PublishForm(forms.Form):
    note = forms.CharField(required=False, max_length=500)
    resolve = forms.ChoiceField(choices=RESOLVE_CHOICES, initial=ResolutionPolicy.MANUAL, required=False)


class BrowseForm(forms.Form):
    search = forms.CharField(required=False, label="Search question or SQL")
    label = forms.ChoiceField(choices=[("", "any"), ("correct", "correct"), ("wrong", "wrong")], required=False)
    error_class = forms.ChoiceField(choices=[("", "any"), *LABEL_ERROR_CLASSES], required=False)
    labeller = forms.CharField(required=False)
    disagreement = forms.ChoiceField(
        choices=[("", "any"), ("yes", "labellers disagree"), ("no", "labellers agree")], required=False
    )
    source = forms.ChoiceField(
        choices=[("", "any"), ("import", "import"), ("manual", "manual"), ("triage", "triage"), ("audit", "audit")],
        required=False,
        label="Label source",
    )


class InvariantsForm(forms.Form):
    """An item's answer-free invariants as JSON (labelling/invariants.py), each bad field named."""

    invariants = forms.JSONField(required=False, widget=forms.Textarea(attrs={"rows": 4}))

    def clean_invariants(self):
        try:
            return invariants_validate(invariants=self.cleaned_data.get("invariants"))
        except InvariantsInvalid as exc:
            raise forms.ValidationError([f"{field}: {message}" for field, message in exc.errors.items()]) from exc
