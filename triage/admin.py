"""Admin for the triage app: tokens (issued and revoked here), policy versions, items, alerts."""

from django import forms
from django.contrib import admin, messages
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import add_never_cache_headers

from config.admin_readonly import ReadOnlyAdmin
from triage import alert_admin, otlp_admin  # noqa: F401 — register the alert and OTLP models
from triage.api_try import try_query_warehouses
from triage.forms import ApiTokenForm, TriagePolicyForm
from triage.models import ApiToken, EstimateSnapshot, LiveQuery, ResolutionEvent, TriageItem, TriagePolicy
from triage.monitoring import policy_judges_fitness
from triage.policy import POLICY_FIELDS, policy_publish
from triage.tokens import api_token_issue, api_token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    form = ApiTokenForm
    list_display = ["client", "name", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["client"]
    fields = ["client", "name", "scopes"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        # A token's identity and scopes are fixed once issued: revoke and issue another.
        return ["client", "name", "scopes"] if obj else []

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None:
            kwargs["form"] = forms.ModelForm  # every field is read-only: no scope checkboxes
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request, obj, form, change):
        if change:
            return
        token, plaintext = api_token_issue(
            client=obj.client, name=obj.name, scopes=form.cleaned_data["scopes"], created_by=request.user
        )
        obj.pk = token.pk
        # Shown once, in this response (see response_add): never put in a message, which
        # would carry it to the browser in the signed `messages` cookie.
        request.issued_api_token = (token, plaintext)

    def response_add(self, request, obj, post_url_continue=None):
        """Show the new token on the page answering the POST; nothing stores or resends it."""
        issued = getattr(request, "issued_api_token", None)
        if issued is None:
            return super().response_add(request, obj, post_url_continue)
        token, plaintext = issued
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "token": token,
            "plaintext": plaintext,
            "changelist_url": reverse("admin:triage_apitoken_changelist"),
            "ingest_url": request.build_absolute_uri(reverse("triage_api:query-ingest")),
            **try_query_warehouses(),
        }
        response = TemplateResponse(request, "admin/triage/apitoken/issued.html", context)
        add_never_cache_headers(response)
        return response

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        for token in queryset:
            api_token_revoke(token=token)
        messages.success(request, f"Revoked {queryset.count()} token(s).")


@admin.register(TriagePolicy)
class TriagePolicyAdmin(admin.ModelAdmin):
    """Saving a policy publishes a new version; versions already in use never change."""

    form = TriagePolicyForm
    list_display = ["version", "flag_rule", "k", "run_verifier", "run_fanout_detector", "audit_share", "sla_minutes"]
    readonly_fields = ["version", "created_by", "created_at", "live_judges_fitness"]

    @admin.display(description="Live judges' fitness")
    def live_judges_fitness(self, obj):
        """Each live judge's fitness badge, from its calibration (judges.fitness via the report)."""
        if obj is None or obj.pk is None:
            return "–"
        return render_to_string("admin/triage/triagepolicy/_live_fitness.html", {"judges": policy_judges_fitness(obj)})

    def save_model(self, request, obj, form, change):
        pass  # the new version is written in save_related, with its judges

    def save_related(self, request, form, formsets, change):
        changes = {field: form.cleaned_data[field] for field in POLICY_FIELDS}
        policy = policy_publish(
            changes=changes,
            judge_versions=list(form.cleaned_data["judge_versions"]),
            created_by=request.user,
            note=form.cleaned_data.get("note", ""),
        )
        # Point the admin's redirect and log entry at the new version.
        form.instance.pk = policy.pk
        form.instance.version = policy.version
        request.published_policy = policy

    def message_user(self, request, message, level=messages.INFO, *args, **kwargs):
        """After a save, one message naming the version published (not Django's "changed" as well)."""
        policy = getattr(request, "published_policy", None)
        if policy is not None and level == messages.SUCCESS:
            message = f"Published {policy}: it is in force for every live query from now on."
        super().message_user(request, message, level, *args, **kwargs)


@admin.register(TriageItem)
class TriageItemAdmin(admin.ModelAdmin):
    list_display = ["query", "status", "probe_confirmed", "judges_agreeing", "assignee", "resolution", "created_at"]
    list_filter = ["status", "resolution", "probe_confirmed"]
    raw_id_fields = ["query", "label"]


class ClientFilter(admin.SimpleListFilter):
    """Filter by API client, naming the blank client (Django's own filter gives it an empty, unnamed link)."""

    title = "client"
    parameter_name = "client"

    def lookups(self, request, model_admin):
        clients = model_admin.get_queryset(request).order_by("client").values_list("client", flat=True).distinct()
        return [(client, client or "(no client)") for client in clients]

    def queryset(self, request, queryset):
        return queryset if self.value() is None else queryset.filter(client=self.value())


@admin.register(LiveQuery)
class LiveQueryAdmin(admin.ModelAdmin):
    list_display = ["query", "client", "status", "created_at", "enqueue_attempts", "pipeline_attempts"]
    list_filter = ["status", ClientFilter]
    raw_id_fields = ["query", "audit_query"]


admin.site.register(ResolutionEvent, ReadOnlyAdmin)
admin.site.register(EstimateSnapshot, ReadOnlyAdmin)
