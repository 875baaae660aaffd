"""The audit page's filters (django-filter): model, actor, action and a date range."""

import django_filters
from auditlog.models import LogEntry
from django.contrib.auth import get_user_model

from config.audit_log import audited_content_types


def _model_choices():
    return [(ct.pk, f"{ct.app_label}.{ct.model}") for ct in audited_content_types()]


class AuditEntryFilter(django_filters.FilterSet):
    model = django_filters.ChoiceFilter(field_name="content_type", label="Model", choices=_model_choices)
    actor = django_filters.ModelChoiceFilter(
        field_name="actor", queryset=get_user_model().objects.order_by("username"), label="Actor"
    )
    action = django_filters.ChoiceFilter(field_name="action", choices=LogEntry.Action.choices, label="Action")
    since = django_filters.DateFilter(field_name="timestamp", lookup_expr="date__gte", label="From")
    until = django_filters.DateFilter(field_name="timestamp", lookup_expr="date__lte", label="To")

    class Meta:
        model = LogEntry
        fields = ["model", "actor", "action", "since", "until"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.form.fields["since"].widget.input_type = "date"
        self.form.fields["until"].widget.input_type = "date"
