from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config import audit_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("health/", views.health, name="health"),
    path("audit/", audit_views.audit_log, name="audit-log"),
    path("admin/", admin.site.urls),
    path("labelling/", include("labelling.urls")),
    path("judges/", include("judges.urls")),
    path("probes/", include("probes.urls")),
    path("triage/", include("triage.urls")),
    path("loops/", include("loops.urls")),
    path("api/", include("triage.api_urls")),
    path("", include("triage.otlp_urls")),  # OTLP/HTTP: POST /v1/traces
]

# A styled page for every unexpected error (Django's default is a bare "Server Error (500)").
handler500 = "config.views.server_error_page"
