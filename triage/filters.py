"""The analyst queue's filters (django-filter): search, warehouse, judge, error class guess, probe outcome, age.

One FilterSet serves the queue page, the claim form (the next item under the same filters)
and the queue's download. A value the form refuses (a judge that is not a number, an
unknown probe outcome) filters nothing, as an empty one does.
"""

from datetime import timedelta

import django_filters
from django import forms
from django.db.models import Q
from django.utils import timezone

from triage.models import TriageItem

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
