from django import forms
from django.core.exceptions import ValidationError

from labelling.error_classes import UNCLASSIFIED, error_classes_join
from labelling.goldset_parser import ParseOptions
from labelling.invariants import InvariantsInvalid, invariants_validate
from labelling.models import Label, LabelDecision, ResolutionPolicy
from labelling.taxonomy import class_choices

RESOLVE_CHOICES = [
    (ResolutionPolicy.MANUAL, "manual: adjudications, else labels that agree"),
    (ResolutionPolicy.MAJORITY, "majority: adjudications, else a strict majority of labellers (ties left out)"),
    (ResolutionPolicy.UNANIMOUS_ONLY, "unanimous-only: only items whose labellers all agree"),
]


class ClassesField(forms.MultipleChoiceField):
    """One or more classes; a blank value (a form's "no class") is none."""

    def to_python(self, value):
        if isinstance(value, str):
            value = [value]  # one class, as a plain dict of data gives it
        return [name for name in super().to_python(value) if name]


def label_rule_errors(form, decision, error_class: str) -> None:
    """Add to `form` what the label rule (`Label.clean()`) says of a decision and its classes."""
    try:
        Label(decision=decision or "", error_class=error_class).clean()
    except ValidationError as exc:
        for name, problems in exc.message_dict.items():
            form.add_error(name, problems)


class ClassifiedDecisionForm(forms.Form):
    """A decision with one or more error classes of the gold set's taxonomy, under the label rule.

    A decision other than wrong drops any class sent with it (a stale checkbox); a wrong one
    without a class breaks the label rule (`Label.clean()`), which says so.
    """

    extra_classes: list[tuple[str, str]] = []

    def __init__(self, *args, gold_set=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["error_class"] = ClassesField(choices=class_choices(gold_set) + self.extra_classes, required=False)

    def clean(self):
        data = super().clean()
        if data.get("decision") != LabelDecision.WRONG:
            data["error_class"] = []
        label_rule_errors(self, data.get("decision"), error_classes_join(data.get("error_class") or []))
        return data


class LabelForm(ClassifiedDecisionForm):
    decision = forms.ChoiceField(choices=LabelDecision.choices)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class AdjudicationForm(ClassifiedDecisionForm):
    extra_classes = [(UNCLASSIFIED, "unclassified")]
    decision = forms.ChoiceField(choices=[(LabelDecision.CORRECT, "Correct"), (LabelDecision.WRONG, "Wrong")])
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}))


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
    taxonomy = forms.FileField(
        required=False,
        label="Error taxonomy",
        help_text="Optional: a JSON list of {class, category, description}, or a CSV with the header"
        " class,category,description. The gold set then uses exactly its classes.",
    )
    taxonomy_name = forms.SlugField(required=False, help_text="Default: the gold set's name.")
    create_classes = forms.BooleanField(required=False, help_text="Add the error classes the file uses.")
    metadata_columns = forms.CharField(
        required=False, help_text="Fields kept as item metadata, comma-separated (e.g. db_id,difficulty)."
    )
    keep_unknown_columns = forms.BooleanField(required=False, help_text="Keep every unknown field as metadata.")
    strict = forms.BooleanField(required=False, help_text="Refuse fields Docket does not know.")
    warehouse_from = forms.CharField(required=False, help_text="Take each item's warehouse from this metadata key.")

    def parse_options(self):
        """Return the import's ParseOptions from the cleaned data."""
        data = self.cleaned_data
        return ParseOptions(
            create_labellers=data["create_labellers"],
            create_classes=data["create_classes"],
            positive_means=data["positive_means"] or LabelDecision.CORRECT,
            metadata_columns=tuple(name.strip() for name in data["metadata_columns"].split(",") if name.strip()),
            keep_unknown=data["keep_unknown_columns"],
            strict=data["strict"],
            warehouse_from=data["warehouse_from"].strip(),
        )


class PublishForm(forms.Form):
    note = forms.CharField(required=False, max_length=500)
    resolve = forms.ChoiceField(choices=RESOLVE_CHOICES, initial=ResolutionPolicy.MANUAL, required=False)


class FitnessThresholdsForm(forms.Form):
    """The bounds a gold set's judges must clear to gate or to monitor (judges.fitness)."""

    catch_lower = forms.FloatField(
        min_value=0,
        max_value=1,
        label="Gate: catch rate's lower bound at least",
        widget=forms.NumberInput({"step": "0.01"}),
    )
    false_reject_upper = forms.FloatField(
        min_value=0,
        max_value=1,
        label="and false-reject rate's upper bound at most",
        widget=forms.NumberInput({"step": "0.01"}),
    )
    kappa_lower = forms.FloatField(
        min_value=-1,
        max_value=1,
        label="Monitor: κ vs gold's lower bound at least",
        widget=forms.NumberInput({"step": "0.01"}),
    )

    @classmethod
    def of(cls, gold_set) -> "FitnessThresholdsForm":
        return cls(
            initial={
                "catch_lower": gold_set.fitness_gate_catch_lower,
                "false_reject_upper": gold_set.fitness_gate_false_reject_upper,
                "kappa_lower": gold_set.fitness_monitor_kappa_lower,
            }
        )


class InvariantsForm(forms.Form):
    """An item's answer-free invariants as JSON (labelling/invariants.py), each bad field named."""

    invariants = forms.JSONField(required=False, widget=forms.Textarea(attrs={"rows": 4}))

    def clean_invariants(self):
        try:
            return invariants_validate(invariants=self.cleaned_data.get("invariants"))
        except InvariantsInvalid as exc:
            raise forms.ValidationError([f"{field}: {message}" for field, message in exc.errors.items()]) from exc
