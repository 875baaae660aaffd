from django.urls import path

from judges import views

app_name = "judges"

urlpatterns = [
    path("", views.index, name="index"),
]

# The comparison dashboard (judges.dashboard_views).
from judges import dashboard_views  # noqa: E402

urlpatterns += [
    path("dashboard/", dashboard_views.dashboard_index, name="dashboard-index"),
    path("dashboard/<int:version_id>/", dashboard_views.dashboard, name="dashboard"),
    path("dashboard/<int:version_id>/report.json", dashboard_views.dashboard_report_json, name="dashboard-report-json"),
    path("dashboard/<int:version_id>/ensemble/", dashboard_views.dashboard_ensemble, name="dashboard-ensemble"),
    path("dashboard/<int:version_id>/missed/", dashboard_views.dashboard_missed, name="dashboard-missed"),
    path("dashboard/<int:version_id>/items/<int:query_id>/", dashboard_views.dashboard_item, name="dashboard-item"),
]
