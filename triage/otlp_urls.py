"""The OTLP/HTTP route, at the root where exporters look for it (`<endpoint>/v1/traces`).

Exempt from the login middleware: exporters authenticate with an API token.
"""

from django.contrib.auth.decorators import login_not_required
from django.urls import path

from triage.otlp_views import OtlpTracesView

app_name = "otlp"

urlpatterns = [
    path("v1/traces", login_not_required(OtlpTracesView.as_view()), name="traces"),
]
