"""Routes under /api/: the versioned ingestion API, its schema and its docs page.

Every route is exempt from the login middleware: API callers authenticate with a token,
and the schema and docs describe the API without revealing any data.
"""

from django.contrib.auth.decorators import login_not_required
from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from triage import api, api_fast

app_name = "triage_api"

urlpatterns = [
    # The common case is answered without the framework; everything else by QueryIngestView.
    path("v1/queries", login_not_required(api_fast.query_ingest), name="query-ingest"),
    path("v1/queries/<int:pk>", login_not_required(api.QueryStatusView.as_view()), name="query-status"),
    path("schema/", login_not_required(SpectacularAPIView.as_view(permission_classes=[])), name="schema"),
    path("docs/", login_not_required(api.api_docs), name="docs"),
]
