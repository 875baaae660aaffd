"""The version page's filters (django-filter) on its items: text, label, class, labeller, agreement, source, metadata.

The page and its items download read the same FilterSet. Every filter but the text search
and the metadata reads the labels, so a blind labeller (`sees_all=False`) gets those two
only. A value the form refuses filters nothing, as an empty one does.
"""

import contextlib

import django_filters
from django.db.models import Count, Q
from django.db.models.fields.json import KeyTransform

from labelling.error_classes import error_class_holds_q
from labelling.models import GoldSetVersionItem

# The filters that read labels, which a blind labeller may not use.
LABEL_FILTERS = ("label", "error_class", "labeller", "disagreement", "source")


def metadata_value_q(value: str) -> Q:
    """Match the annotated metadata value `meta` against a typed value: as text, or as the number it spells."""
    matches = Q(meta=value)
    with contextlib.suppress(ValueError):
        matches |= Q(meta=int(value))
    if value in ("true", "false"):
        matches |= Q(meta=value == "true")
    return matches


class VersionItemFilter(django_filters.FilterSet):
    search = django_filters.CharFilter(method="question_or_sql", label="Search question or SQL")
    label = django_filters.ChoiceFilter(
        field_name="decision", choices=[("correct", "correct"), ("wrong", "wrong")], empty_label="any", label="Label"
    )
    error_class = django_filters.CharFilter(method="holds_class", label="Error class")
    labeller = django_filters.ChoiceFilter(method="labelled_by", choices=[], empty_label="anyone")
    disagreement = django_filters.ChoiceFilter(
        method="labellers_disagree",
        choices=[("yes", "labellers disagree"), ("no", "labellers agree")],
        empty_label="any",
    )
    source = django_filters.ChoiceFilter(
        method="labelled_from",
        choices=[("import", "import"), ("manual", "manual"), ("triage", "triage"), ("audit", "audit")],
        empty_label="any",
        label="Label source",
    )
    meta_key = django_filters.CharFilter(method="with_metadata", max_length=100, label="Metadata key")
    meta_value = django_filters.CharFilter(method="read_with_meta_key", max_length=200, label="has the value")

    class Meta:
        model = GoldSetVersionItem
        fields = ["search", "label", "error_class", "labeller", "disagreement", "source", "meta_key", "meta_value"]

    def __init__(self, *args, labellers=(), sees_all=True, **kwargs):
        super().__init__(*args, **kwargs)
        # A choice of who labelled this version, not free text that silently matches nothing.
        self.filters["labeller"].extra["choices"] = [(name, name) for name in labellers]
        if not sees_all:
            for name in LABEL_FILTERS:
                del self.filters[name]

    def question_or_sql(self, queryset, name, value):
        return queryset.filter(Q(query__question__icontains=value) | Q(query__sql__icontains=value))

    def holds_class(self, queryset, name, value):
        return queryset.filter(error_class_holds_q(value))

    def labelled_by(self, queryset, name, value):
        return queryset.filter(query__labels__labeller__username=value, query__labels__is_current=True).distinct()

    def labelled_from(self, queryset, name, value):
        return queryset.filter(query__labels__source=value, query__labels__is_current=True).distinct()

    def labellers_disagree(self, queryset, name, value):
        current = Q(query__labels__is_current=True)
        queryset = queryset.annotate(
            decisions=Count("query__labels__decision", filter=current, distinct=True),
            classes=Count("query__labels__error_class", filter=current, distinct=True),
        )
        disagreeing = Q(decisions__gt=1) | Q(classes__gt=1)
        return queryset.filter(disagreeing) if value == "yes" else queryset.exclude(disagreeing)

    def with_metadata(self, queryset, name, value):
        wanted = self.form.cleaned_data.get("meta_value") or ""
        return queryset.annotate(meta=KeyTransform(value, "query__metadata")).filter(metadata_value_q(wanted))

    def read_with_meta_key(self, queryset, name, value):
        return queryset  # the value is read by `with_metadata`, with its key

    def params(self) -> dict[str, str]:
        """The valid filters as query-string parameters (for the page links and the download)."""
        self.is_valid()
        cleaned = getattr(self.form, "cleaned_data", {})
        return {name: str(cleaned[name]) for name in self.filters if cleaned.get(name)}
