"""The triage pages' filters (django-filter): the analyst queue's, and the resolved list's.

`QueueFilter` (search, warehouse, judge, error class guess, probe outcome, age) serves the
queue page, the claim form (the next item under the same filters) and the queue's download;
`ResolvedFilter` (decision, error class, analyst, a date range) the resolved list. A value
a filter's form refuses (a judge that is not a number, an unknown probe outcome) filters
nothing, as an empty one does.
"""

from datetime import timedelta

import django_filters
from django import forms
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils import timezone

from labelling.taxonomy import class_choices
from triage.models import Resolution, TriageItem, TriageStatus

PROBE_OUTCOMES = {
    "confirmed": "probe confirmed",
    "verifier": "verifier failed",
    "none": "neither (judges only)",
}
SEARCH_MAX_CHARACTERS = 200


class WholeNumberFilter(django_filters.NumberFilter):
    field_class = forms.IntegerField


class QueueFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    warehouse = django_filters.CharFilter(field_name="query__warehouse__name", label="Warehouse")
    judge = WholeNumberFilter(field_name="rejecting_judges", label="Judge")
    error_class = django_filters.CharFilter(field_name="error_class_guess", label="Error class guess")
    probe = django_filters.ChoiceFilter(method="probe_outcome", choices=list(PROBE_OUTCOMES.items()))
    older_than = WholeNumberFilter(method="waiting_longer_than", min_value=0, label="Older than (min)")

    class Meta:
        model = TriageItem
        fields = ["q", "warehouse", "judge", "error_class", "probe", "older_than"]

    def search(self, queryset, name, value):
        text = value[:SEARCH_MAX_CHARACTERS]
        return queryset.filter(
            Q(query__question__icontains=text)
            | Q(query__sql__icontains=text)
            | Q(query__external_id__icontains=text)
            | Q(flagged_because__icontains=text)
        )

    def probe_outcome(self, queryset, name, value):
        if value == "confirmed":
            return queryset.filter(probe_confirmed=True)
        if value == "verifier":
            return queryset.filter(verifier_failed=True)
        return queryset.filter(probe_confirmed=False, verifier_failed=False)

    def waiting_longer_than(self, queryset, name, value):
        return queryset.filter(created_at__lt=timezone.now() - timedelta(minutes=value)) if value else queryset

    def values(self) -> dict:
        """The valid filter values, by parameter name (what the page shows in its controls)."""
        self.is_valid()
        cleaned = getattr(self.form, "cleaned_data", {})
        return {name: cleaned[name] for name in self.filters if cleaned.get(name) not in (None, "", 0)}

    def params(self) -> dict[str, str]:
        """The valid filters as query-string parameters (for links, the claim form and exports)."""
        return {
            name: str(int(value) if name in ("judge", "older_than") else value) for name, value in self.values().items()
        }


DATE_INPUT = forms.DateInput(attrs={"type": "date"})


def _analysts(request):
    """Offer the analysts who resolved something, not every account."""
    resolvers = TriageItem.objects.filter(status=TriageStatus.RESOLVED).values("resolved_by")
    return get_user_model().objects.filter(pk__in=resolvers).order_by("username")


def _error_class_choices():
    return class_choices(None)


class ResolvedFilter(django_filters.FilterSet):
    decision = django_filters.ChoiceFilter(
        field_name="resolution", choices=Resolution.choices, label="Decision", empty_label="any"
    )
    error_class = django_filters.ChoiceFilter(
        field_name="resolution_error_class", choices=_error_class_choices, label="Error class", empty_label="any"
    )
    analyst = django_filters.ModelChoiceFilter(
        field_name="resolved_by", queryset=_analysts, label="Analyst", empty_label="anyone"
    )
    since = django_filters.DateFilter(
        field_name="resolved_at", lookup_expr="date__gte", label="Resolved from", widget=DATE_INPUT
    )
    until = django_filters.DateFilter(field_name="resolved_at", lookup_expr="date__lte", label="to", widget=DATE_INPUT)

    class Meta:
        model = TriageItem
        fields = ["decision", "error_class", "analyst", "since", "until"]
