from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Count

from judges.backends.vendors import version_endpoint
from judges.drafts import example_values_parse
from judges.models import Backend, JudgeVersion
from judges.services import VERSION_FIELDS
from judges.simulated_models import simulated_model_problem
from labelling.models import GoldSetVersion

VERSION_WIDGETS = {
    "prompt_template": forms.Textarea(attrs={"rows": 8, "placeholder": "Leave empty for the built-in instructions."}),
}


class JudgeVersionForm(forms.ModelForm):
    """The frozen part of a judge; saving it always makes a new version."""

    config = forms.JSONField(
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=(
            'JSON, e.g. {"concurrency": 16, "api_key_env": "OPENAI_API_KEY"}. Never a key itself: api_key_env names '
            "a variable on JUDGE_API_KEY_VARS; base_url must be on JUDGE_BASE_URLS and only an admin may set it. "
            '{"simulated": true} binds the judge to the local vendor simulator.'
        ),
    )

    note = forms.CharField(
        required=False,
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="What this version changes and why; shown in the version list and on the compare page.",
    )

    class Meta:
        model = JudgeVersion
        fields = VERSION_FIELDS
        widgets = VERSION_WIDGETS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["schema_token_budget"].required = False

    def clean_config(self):
        return self.cleaned_data.get("config") or {}

    def clean(self):
        data = super().clean()
        # A simulated judge names a model the simulator was told about (judges/simulated_models.py),
        # checked when the model, backend or config changes (an unchanged one was checked when saved).
        endpoint = version_endpoint(data.get("backend"), data.get("config"))
        touched = {"model", "backend", "config"} & set(self.changed_data)
        simulated = endpoint is not None and endpoint.simulated and touched and data.get("model")
        if simulated and (problem := simulated_model_problem(data["model"])):
            self.add_error("model", problem)
        return data

    def clean_prompt_template(self):
        # A browser sends a textarea's lines with CRLF: store them as shown, so the built-in prompt
        # sent back unchanged stays the built-in one (judges.selectors.prompt_as_stored).
        return (self.cleaned_data.get("prompt_template") or "").replace("\r\n", "\n")

    def clean_schema_token_budget(self):
        value = self.cleaned_data.get("schema_token_budget")
        return JudgeVersion._meta.get_field("schema_token_budget").default if value is None else value


class GoldItemsField(forms.MultipleChoiceField):
    """Gold items as "<gold-set version id>:<item id>"; the service says which may be examples, and why not."""

    def valid_value(self, value):
        return True

    def clean(self, value):
        return example_values_parse(super().clean(value))


class DraftExtrasForm(forms.Form):
    """Beside the draft on the edit page: its worked examples, and the item to try it on."""

    examples = GoldItemsField(required=False)
    try_item = forms.CharField(required=False)

    def __init__(self, *args, carried: list[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.carried = list(carried)

    @property
    def checked(self) -> set[str]:
        """The example checkboxes to show ticked: what was sent, else the current version's examples."""
        return set(self.data.getlist("examples")) if self.is_bound else set(self.carried)

    @property
    def carried_items(self) -> list[tuple[str, str]]:
        """The current version's examples as (checkbox value, item id)."""
        return [(value, value.partition(":")[2]) for value in self.carried]

    def clean_try_item(self):
        value = self.cleaned_data.get("try_item")
        return example_values_parse([value])[0] if value else None

    def try_item_required(self):
        if self.cleaned_data.get("try_item") is None:
            raise ValidationError({"try_item": "choose a gold item to try the draft on"})


class JudgeCreateForm(JudgeVersionForm):
    name = forms.SlugField(max_length=64)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    field_order = ["name", "description"]


class JudgeCloneForm(forms.Form):
    name = forms.SlugField(max_length=64, help_text="Name of the new judge.")


class GoldSetVersionChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return f"{obj} · {obj.item_count} item{'s' if obj.item_count != 1 else ''}"


class RunStartForm(forms.Form):
    # Largest first: with nothing asked for, the version with the most items is preselected
    # (not the newest, which may be a five-item import made a minute ago; see __init__).
    gold_set_version = GoldSetVersionChoice(
        queryset=GoldSetVersion.objects.select_related("gold_set")
        .annotate(item_count=Count("items"))
        .order_by("-item_count", "-published_at", "-pk")
    )
    judge_versions = forms.ModelMultipleChoiceField(
        queryset=JudgeVersion.objects.exclude(backend=Backend.REPLAY)
        .select_related("judge")
        .order_by("judge__name", "-number"),
        widget=forms.CheckboxSelectMultiple,
    )
    repeats = forms.IntegerField(min_value=1, max_value=20, initial=3)
    spend_cap_usd = forms.DecimalField(required=False, min_value=0.0001, decimal_places=4, label="Spend cap (USD)")
    label = forms.CharField(required=False, max_length=100)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Preselect the version asked for (a dashboard's "start a run" link) or else the largest one.
        field = self.fields["gold_set_version"]
        if self.initial.get("gold_set_version") is None:
            self.initial["gold_set_version"] = field.queryset.values_list("pk", flat=True).first()


class RunResumeForm(forms.Form):
    spend_cap_usd = forms.DecimalField(required=False, min_value=0.0001, decimal_places=4, label="New spend cap (USD)")
