"""Forms of the taxonomy pages: a class to add, a new name, a name to map onto a class."""

from django import forms

from labelling.error_classes import CLASS_NAME_MAX_LENGTH
from labelling.taxonomy_models import TaxonomyClass


class ClassAddForm(forms.Form):
    name = forms.CharField(max_length=CLASS_NAME_MAX_LENGTH, label="Class")
    category = forms.CharField(max_length=CLASS_NAME_MAX_LENGTH, required=False)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 1}))


class ClassRenameForm(forms.Form):
    name = forms.CharField(max_length=CLASS_NAME_MAX_LENGTH, label="New name")


class ClassMapForm(forms.Form):
    """Another name of a class: what a Docket checker emits (e.g. the verifier's unknown_object)."""

    name = forms.CharField(max_length=CLASS_NAME_MAX_LENGTH, label="Name a checker emits")
    target = forms.ModelChoiceField(queryset=TaxonomyClass.objects.none(), label="maps to")

    def __init__(self, *args, taxonomy, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].queryset = TaxonomyClass.objects.filter(taxonomy=taxonomy).order_by("position", "id")
