from django import forms

from labelling.models import ErrorClass, LabelDecision


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
    error_class = forms.ChoiceField(choices=[("", "—"), *ErrorClass.choices], required=False)
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
    gold_set = forms.SlugField(max_length=64, help_text="Created if it does not exist; extended if it does.")
    format = forms.ChoiceField(choices=[("", "From the file name"), ("jsonl", "JSONL"), ("csv", "CSV")], required=False)


class PublishForm(forms.Form):
    note = forms.CharField(required=False, max_length=500)
