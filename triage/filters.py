"""The resolved list's filters (django-filter): decision, error class, analyst and a date range."""

import django_filters
from django import forms
from django.contrib.auth import get_user_model

from labelling.taxonomy import class_choices
from triage.models import Resolution, TriageItem, TriageStatus

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
