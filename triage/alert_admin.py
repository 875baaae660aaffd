"""Admin of alerts: the alerts (acknowledged or resolved here), webhooks, e-mail recipients, the delivery log."""

import secrets

from django import forms
from django.contrib import admin, messages

from config.admin_readonly import ReadOnlyAdmin
from triage.alert_models import Alert, AlertDelivery, AlertRecipient, Webhook
from triage.webhooks import webhook_secret, webhook_url_problem


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    """Alerts are raised by the checks; the admin may acknowledge or resolve one, not invent or erase it."""

    list_display = ["message", "kind", "cause_key", "created_at", "acknowledged_at", "resolved_at"]
    list_filter = ["kind"]
    readonly_fields = ["kind", "cause_key", "judge_version", "message", "details", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class WebhookForm(forms.ModelForm):
    url = forms.URLField(max_length=500, assume_scheme="https")

    class Meta:
        model = Webhook
        fields = ["url", "kind", "is_active", "note"]

    def clean_url(self):
        url = self.cleaned_data["url"]
        if problem := webhook_url_problem(url):
            raise forms.ValidationError(problem)
        return url


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    """A new webhook's secret is shown once, in the message after saving (Docket keeps only its salt)."""

    form = WebhookForm
    list_display = ["url", "kind", "is_active", "note", "created_at"]
    fields = ["url", "kind", "is_active", "note"]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.secret_salt = secrets.token_hex(16)
        super().save_model(request, obj, form, change)
        if not change:
            messages.warning(request, f"The webhook's signing secret (shown once): {webhook_secret(obj)}")


@admin.register(AlertRecipient)
class AlertRecipientAdmin(admin.ModelAdmin):
    """The users who get alerts by e-mail, at the address on their account."""

    list_display = ["user", "created_at"]
    raw_id_fields = ["user"]


admin.site.register(AlertDelivery, ReadOnlyAdmin)
